from django.db import migrations, models


def drop_abandoned(apps, schema_editor):
    # Before this migration a scan left unfinished was abandoned (its worker died) and the next
    # one covered its subjects again; now an unfinished scan goes on, and one without its
    # `since` would start over from the first memory.
    HygieneScan = apps.get_model("memories", "HygieneScan")
    HygieneScan.objects.filter(finished_at__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("memories", "0014_export_purge")]
    operations = [
        migrations.AddField(
            model_name="hygienescan",
            name="since",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="hygienescan",
            name="after_id",
            field=models.BigIntegerField(default=0),
        ),
        migrations.RunPython(drop_abandoned, migrations.RunPython.noop),
    ]
