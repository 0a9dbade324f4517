from django.db import migrations
from django.utils import timezone

# The django-q2 schedules the app relies on, by name. update_or_create keeps this idempotent: the
# migration can run on a database where someone already created (or edited) the schedule.
SCHEDULES = [
    {
        # Re-queues pending translations whose backoff is over or whose worker died mid-task.
        "name": "sweep-translations",
        "func": "memories.tasks.sweep_translations",
        "schedule_type": "I",  # Schedule.MINUTES
        "minutes": 1,
        "repeats": -1,
    },
]


def create_schedules(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    for spec in SCHEDULES:
        defaults = {key: value for key, value in spec.items() if key != "name"}
        Schedule.objects.update_or_create(
            name=spec["name"],
            defaults=defaults,
            create_defaults={**defaults, "next_run": timezone.now()},
        )


def remove_schedules(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name__in=[spec["name"] for spec in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("zeromemory", "0001_extensions"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]
    operations = [migrations.RunPython(create_schedules, remove_schedules)]
