from django.db import migrations
from django.utils import timezone

# One schedule sweeps every background job (memories.jobs.jobs_sweep walks the registry of
# declared jobs), in place of one schedule per job; a job declared later needs none of its own.
SWEEPER = {
    "name": "sweep-jobs",
    "func": "memories.jobs.jobs_sweep",
    "schedule_type": "I",  # Schedule.MINUTES
    "minutes": 1,
    "repeats": -1,
}
# The schedules it replaces, as 0005, 0007 and 0010 created them (brought back on reversal).
REPLACED = {
    "sweep-translations": "memories.canonical.tasks.sweep_translations",
    "sweep-chunks": "memories.capture.tasks.sweep_chunks",
    "sweep-conflicts": "memories.hygiene.tasks.sweep_conflicts",
}


def _put(Schedule, name: str, func: str) -> None:
    defaults = {**{k: v for k, v in SWEEPER.items() if k != "name"}, "func": func}
    Schedule.objects.update_or_create(
        name=name, defaults=defaults, create_defaults={**defaults, "next_run": timezone.now()}
    )


def one_sweeper(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name__in=list(REPLACED)).delete()
    _put(Schedule, SWEEPER["name"], SWEEPER["func"])


def sweeper_per_job(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.filter(name=SWEEPER["name"]).delete()
    for name, func in REPLACED.items():
        _put(Schedule, name, func)


class Migration(migrations.Migration):
    dependencies = [("memories", "0026_usage_model_names")]
    operations = [migrations.RunPython(one_sweeper, sweeper_per_job)]
