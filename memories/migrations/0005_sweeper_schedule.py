from django.db import migrations
from django.utils import timezone

# The translation sweeper's schedule, now owned here (zeromemory/migrations/0002_schedules.py once
# created it under the old task path). update_or_create moves an existing schedule to the new
# path and keeps an edited next run.
SWEEPER = {
    # Re-queues pending translations whose backoff is over or whose worker died mid-task.
    "name": "sweep-translations",
    "func": "memories.canonical.tasks.sweep_translations",
    "schedule_type": "I",  # Schedule.MINUTES
    "minutes": 1,
    "repeats": -1,
}


def create_sweeper(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    defaults = {key: value for key, value in SWEEPER.items() if key != "name"}
    Schedule.objects.update_or_create(
        name=SWEEPER["name"],
        defaults=defaults,
        create_defaults={**defaults, "next_run": timezone.now()},
    )


def remove_sweeper(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(name=SWEEPER["name"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0004_idempotency_fingerprint"),
        ("zeromemory", "0002_schedules"),
    ]
    operations = [migrations.RunPython(create_sweeper, remove_sweeper)]
