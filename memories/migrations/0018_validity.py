"""Validity periods for every memory, and what ageing reads (confirmed, last recalled).

The fill reads what is already stored. Most memories were never forgotten, superseded or
restored: one open period from their creation, in one statement. The others are replayed from
their timestamps and their conflict actions (a hygiene retirement and its undo, a held memory
kept): each event opens or closes a period, an event that changes nothing is skipped, and the
memory's current state closes or opens the last one. A forget that was later restored and then
forgotten again kept only its last time, so only the gaps the rows still tell are rebuilt.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


SIMPLE = """
    m.forgotten_at IS NULL AND m.superseded_at IS NULL AND m.restored_at IS NULL
    AND NOT EXISTS (
        SELECT 1 FROM memories_conflictaction a WHERE a.retired_id = m.id OR a.kept_id = m.id
    )
    AND NOT EXISTS (
        SELECT 1 FROM memories_conflict c WHERE c.memory_a_id = m.id AND c.verdict = 'held'
    )
"""

FILL_SIMPLE = f"""
INSERT INTO memories_validityperiod (memory_id, valid_from, valid_until, started, ended,
                                     started_by_id)
SELECT m.id, m.created_at, NULL, 'created', '', m.created_by_id
FROM memories_memory m WHERE m.valid AND {SIMPLE};
UPDATE memories_memory m SET valid_from = m.created_at, valid_until = NULL
WHERE m.valid AND {SIMPLE};
"""

# Confirmed: the last absorbed write, edit or restore; last recalled: the activity log's recalls.
FILL_AGEING = """
UPDATE memories_memory m SET confirmed_at = (
    SELECT max(t) FROM (
        SELECT max(p.created_at) AS t FROM memories_provenance p
        WHERE p.memory_id = m.id AND p.absorbed
        UNION ALL SELECT max(v.created_at) FROM memories_memoryversion v WHERE v.memory_id = m.id
        UNION ALL SELECT m.restored_at
    ) x
);
UPDATE memories_memory m SET last_recalled_at = r.at
FROM (
    SELECT e->>'id' AS public_id, max(a.created_at) AS at
    FROM memories_activitylog a CROSS JOIN jsonb_array_elements(a.results) e
    WHERE a.operation = 'recall' AND jsonb_typeof(a.results) = 'array'
    GROUP BY 1
) r
WHERE m.public_id = r.public_id;
"""


def _events(memory, held, actions):
    """(time, opens, how, by, replaced by) of everything stored about this memory's state."""
    events = [] if held else [(memory.created_at, True, "created", memory.created_by_id, None)]
    for action in actions:
        if action.retired_id == memory.id:
            forgot = action.resolution.startswith("forget")
            ended, replaced = ("forgotten", None) if forgot else ("superseded", action.kept_id)
            events.append((action.created_at, False, ended, action.by_id, replaced))
            if action.undone_at:
                events.append((action.undone_at, True, "restored", action.undone_by_id, None))
        elif action.kept_id == memory.id and held:
            events.append((action.created_at, True, "restored", action.by_id, None))
            if action.undone_at:
                events.append((action.undone_at, False, "forgotten", action.undone_by_id, None))
    if memory.forgotten_at and not held:
        events.append((memory.forgotten_at, False, "forgotten", memory.forgotten_by_id, None))
    if memory.superseded_at:
        events.append((memory.superseded_at, False, "superseded", None, memory.superseded_by_id))
    if memory.restored_at:
        events.append((memory.restored_at, True, "restored", memory.restored_by_id, None))
    return sorted(events, key=lambda event: event[0])


def _periods(memory, events):
    periods, current = [], None
    for at, opens, how, by, replaced in events:
        if opens and current is None:
            current = {"valid_from": at, "started": how, "started_by_id": by}
        elif not opens and current is not None:
            periods.append(
                {**current, "valid_until": at, "ended": how, "ended_by_id": by,
                 "replaced_by_id": replaced}
            )
            current = None
    if memory.valid and current is None:
        at = memory.restored_at or memory.updated_at
        current = {"valid_from": at, "started": "restored", "started_by_id": None}
    if not memory.valid and current is not None:
        ended = "superseded" if memory.superseded_by_id else "forgotten"
        at = memory.superseded_at or memory.forgotten_at or memory.updated_at
        periods.append(
            {**current, "valid_until": max(at, current["valid_from"]), "ended": ended,
             "replaced_by_id": memory.superseded_by_id}
        )
        current = None
    if current is not None:
        periods.append({**current, "valid_until": None, "ended": ""})
    return periods


def fill(apps, schema_editor):
    Memory = apps.get_model("memories", "Memory")
    ValidityPeriod = apps.get_model("memories", "ValidityPeriod")
    Conflict = apps.get_model("memories", "Conflict")
    ConflictAction = apps.get_model("memories", "ConflictAction")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(FILL_SIMPLE)
        cursor.execute(FILL_AGEING)
    held = set(Conflict.objects.filter(verdict="held").values_list("memory_a_id", flat=True))
    rest = Memory.objects.filter(valid_from__isnull=True).order_by("id")
    for memory in rest.iterator(chunk_size=500):
        actions = ConflictAction.objects.filter(
            models.Q(retired_id=memory.id) | models.Q(kept_id=memory.id)
        ).order_by("created_at", "id")
        periods = _periods(memory, _events(memory, memory.id in held, actions))
        ValidityPeriod.objects.bulk_create(
            ValidityPeriod(memory_id=memory.id, **period) for period in periods
        )
        if periods:
            Memory.objects.filter(pk=memory.pk).update(
                valid_from=periods[0]["valid_from"],
                valid_until=periods[-1]["valid_until"],
                validity_gaps=len(periods) > 1,
            )


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0017_rules'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='confirmed_at',
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name='confirmed'),
        ),
        migrations.AddField(
            model_name='memory',
            name='last_recalled_at',
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name='last recalled'),
        ),
        migrations.AddField(
            model_name='memory',
            name='valid_from',
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name='valid from'),
        ),
        migrations.AddField(
            model_name='memory',
            name='valid_until',
            field=models.DateTimeField(blank=True, editable=False, null=True, verbose_name='valid until'),
        ),
        migrations.AddField(
            model_name='memory',
            name='validity_gaps',
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.CreateModel(
            name='ValidityPeriod',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('valid_from', models.DateTimeField(verbose_name='valid from')),
                ('valid_until', models.DateTimeField(blank=True, null=True, verbose_name='valid until')),
                ('started', models.CharField(choices=[('created', 'Written'), ('restored', 'Restored')], max_length=16)),
                ('ended', models.CharField(blank=True, choices=[('forgotten', 'Forgotten'), ('superseded', 'Superseded')], default='', max_length=16)),
                ('ended_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('memory', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='validity_periods', to='memories.memory')),
                ('replaced_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='replaced_periods', to='memories.memory')),
                ('started_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'validity period',
                'verbose_name_plural': 'validity periods',
                'ordering': ['memory_id', 'valid_from', 'id'],
                'indexes': [models.Index(fields=['memory', 'valid_from'], name='validity_memory_from')],
                'constraints': [models.UniqueConstraint(condition=models.Q(('valid_until__isnull', True)), fields=('memory',), name='validity_one_open_period')],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
