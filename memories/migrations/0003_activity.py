import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
import functools
import zeromemory.core.ids
from django.conf import settings
from django.db import migrations, models

# The activity log's schedules, by name (as in zeromemory/migrations/0002_schedules.py);
# update_or_create keeps this idempotent and leaves an edited next run alone.
SCHEDULES = [
    {
        # Drops rows older than ZM_ACTIVITY_RETENTION_DAYS.
        "name": "prune-activity",
        "func": "memories.tasks.prune_activity",
        "schedule_type": "D",  # Schedule.DAILY
        "repeats": -1,
    },
    {
        # Adds the memories recalls handed out to their recall_count.
        "name": "fold-recall-counts",
        "func": "memories.tasks.fold_recall_counts",
        "schedule_type": "I",  # Schedule.MINUTES
        "minutes": 1,
        "repeats": -1,
    },
]


def schedule_tasks(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    for spec in SCHEDULES:
        defaults = {key: value for key, value in spec.items() if key != "name"}
        Schedule.objects.update_or_create(
            name=spec["name"],
            defaults=defaults,
            create_defaults={**defaults, "next_run": django.utils.timezone.now()},
        )


def unschedule_tasks(apps, schema_editor):
    names = [spec["name"] for spec in SCHEDULES]
    apps.get_model("django_q", "Schedule").objects.filter(name__in=names).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0002_seed_kinds'),
        ('scopes', '0001_initial'),
        ('django_q', '0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ActivityLog',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('public_id', models.CharField(default=functools.partial(zeromemory.core.ids.new_public_id, *('act',), **{}), editable=False, max_length=40, unique=True, verbose_name='id')),
                ('surface', models.CharField(choices=[('api', 'API'), ('mcp', 'MCP'), ('dashboard', 'Dashboard')], max_length=16, verbose_name='surface')),
                ('client_name', models.CharField(blank=True, default='', max_length=120, verbose_name='client')),
                ('operation', models.CharField(choices=[('recall', 'Recall'), ('build_context', 'Build context'), ('briefing', 'Briefing'), ('remember', 'Remember')], max_length=16, verbose_name='operation')),
                ('scopes', models.JSONField(blank=True, default=list, verbose_name='scopes')),
                ('query', models.TextField(blank=True, default='', verbose_name='query')),
                ('options', models.JSONField(blank=True, default=dict, verbose_name='options')),
                ('results', models.JSONField(blank=True, default=list, verbose_name='results')),
                ('latency_ms', models.FloatField(verbose_name='latency (ms)')),
                ('outcome', models.CharField(choices=[('hit', 'Hit'), ('empty', 'Empty'), ('error', 'Error')], max_length=8, verbose_name='outcome')),
                ('error_code', models.CharField(blank=True, default='', max_length=32, verbose_name='error code')),
                ('pending_recalls', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), blank=True, default=list, size=None)),
                ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now, verbose_name='created')),
                ('token', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='scopes.apitoken', verbose_name='token')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user')),
            ],
            options={
                'verbose_name': 'activity',
                'verbose_name_plural': 'activity',
                'ordering': ['-public_id'],
                'indexes': [models.Index(fields=['user', '-public_id'], name='activity_user_recent'), models.Index(condition=models.Q(('pending_recalls', []), _negated=True), fields=['id'], name='activity_pending_recalls')],
            },
        ),
        migrations.RunPython(schedule_tasks, unschedule_tasks),
    ]
