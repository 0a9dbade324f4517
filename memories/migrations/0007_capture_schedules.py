from django.db import migrations
from django.utils import timezone

# Capture's schedules, by name; update_or_create keeps this idempotent.
SCHEDULES = [
    {
        # Queues chunks that are due (backoff over, a key configured, a worker that died).
        "name": "sweep-chunks",
        "func": "memories.capture.tasks.sweep_chunks",
        "schedule_type": "I",  # Schedule.MINUTES
        "minutes": 1,
        "repeats": -1,
    },
    {
        # Drops chunk texts older than ZM_CHUNK_RETENTION_DAYS after extraction.
        "name": "purge-chunks",
        "func": "memories.capture.tasks.purge_chunks",
        "schedule_type": "D",  # Schedule.DAILY
        "repeats": -1,
    },
]


def create(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    for spec in SCHEDULES:
        defaults = {key: value for key, value in spec.items() if key != "name"}
        Schedule.objects.update_or_create(
            name=spec["name"], defaults=defaults, create_defaults={**defaults, "next_run": timezone.now()}
        )


def remove(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name__in=[spec["name"] for spec in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("memories", "0006_chunks")]
    operations = [migrations.RunPython(create, remove)]
