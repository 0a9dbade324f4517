from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0022_cheaper_insights"),
    ]

    operations = [
        migrations.AddField(
            model_name="provenance",
            name="claims",
            field=models.JSONField(blank=True, default=dict, verbose_name="claims"),
        ),
    ]
