from django.db import migrations

# The translation sweeper's schedule is owned by the memories app since
# memories/migrations/0005_sweeper_schedule.py (the project package creates no app's schedules).
# This migration stays, empty, so databases that applied it keep a consistent history.


class Migration(migrations.Migration):
    dependencies = [
        ("zeromemory", "0001_extensions"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]
    operations = []
