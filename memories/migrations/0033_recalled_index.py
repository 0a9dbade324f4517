from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0032_activity_steps"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("recall_count__gt", 0), ("valid", True)),
                fields=["scope"],
                name="memory_recalled",
            ),
        ),
    ]
