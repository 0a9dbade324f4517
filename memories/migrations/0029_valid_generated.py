"""`Memory.valid` becomes a generated column: valid when the memory has been valid (`valid_from`)
and its last validity period is still open (no `valid_until`).

Every write already kept the bounds and the flag in step; this first mends any row where they
disagree, in the flag's favour (a valid memory gets an open end, and a start at its creation if
it had none; a memory that is not valid gets its end, and its open period is closed there), so
no memory changes state. PostgreSQL cannot turn a column into a generated one, so the column is
dropped and added again, with the index and the constraint that read it. A new memory is valid
from when it is made (`valid_from` defaults to now), as `valid` defaulted to true.
"""

import django.utils.timezone
from django.db import migrations, models

MEND = """
UPDATE memories_memory SET valid_from = created_at WHERE valid AND valid_from IS NULL;
UPDATE memories_memory SET valid_until = NULL WHERE valid AND valid_until IS NOT NULL;
UPDATE memories_memory
SET valid_until = GREATEST(COALESCE(superseded_at, forgotten_at, updated_at), valid_from)
WHERE NOT valid AND valid_from IS NOT NULL AND valid_until IS NULL;
UPDATE memories_validityperiod p
SET valid_until = GREATEST(m.valid_until, p.valid_from),
    ended = CASE WHEN m.superseded_by_id IS NULL THEN 'forgotten' ELSE 'superseded' END
FROM memories_memory m
WHERE p.memory_id = m.id AND p.valid_until IS NULL AND NOT m.valid;
"""

# Going back: the flag as the bounds say, once the plain column is there again.
UNMEND = "UPDATE memories_memory SET valid = (valid_from IS NOT NULL AND valid_until IS NULL);"

VALID_NOW = models.Q(("valid", True))


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0028_spend_per_user"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="memory", name="memory_one_valid_per_text"),
        migrations.RemoveIndex(model_name="memory", name="memory_scope_recent"),
        migrations.RemoveIndex(model_name="memory", name="memory_kind_recent"),
        migrations.RunSQL(MEND, UNMEND),
        migrations.RemoveField(model_name="memory", name="valid"),
        migrations.AddField(
            model_name="memory",
            name="valid",
            field=models.GeneratedField(
                db_persist=True,
                expression=models.ExpressionWrapper(
                    models.Q(("valid_from__isnull", False), ("valid_until__isnull", True)),
                    output_field=models.BooleanField(),
                ),
                output_field=models.BooleanField(),
                verbose_name="valid",
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="valid_from",
            field=models.DateTimeField(
                blank=True,
                default=django.utils.timezone.now,
                editable=False,
                null=True,
                verbose_name="valid from",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                fields=["scope", "valid", "-created_at"], name="memory_scope_recent"
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=VALID_NOW,
                fields=["kind", "scope", "-created_at"],
                name="memory_kind_recent",
            ),
        ),
        migrations.AddConstraint(
            model_name="memory",
            constraint=models.UniqueConstraint(
                condition=VALID_NOW,
                fields=("scope", "content_hash"),
                name="memory_one_valid_per_text",
            ),
        ),
    ]
