from django.db import migrations
from django.utils import timezone

# Hygiene's schedules, by name; update_or_create keeps this idempotent.
SCHEDULES = [
    {
        # Every minute it asks whether ZM_HYGIENE_INTERVAL_MINUTES have passed since the last
        # scan began (so a changed setting applies without a migration), and scans if so.
        "name": "hygiene-scan",
        "func": "memories.hygiene.tasks.scan_if_due",
        "schedule_type": "I",  # Schedule.MINUTES
        "minutes": 1,
        "repeats": -1,
    },
    {
        # Queues pairs that are due for the judge (backoff over, a key set, a worker that died).
        "name": "sweep-conflicts",
        "func": "memories.hygiene.tasks.sweep_conflicts",
        "schedule_type": "I",
        "minutes": 1,
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
    dependencies = [("memories", "0009_conflicts")]
    operations = [migrations.RunPython(create, remove)]
