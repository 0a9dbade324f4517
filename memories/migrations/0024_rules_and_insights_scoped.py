"""Usage that cannot be forged and insights that stay in their scope (issue 37).

- A use counts towards rule candidates in full only when a writer or admin of the memory's
  scope reported it through a credential not restricted to scopes; uses already stored are
  weighed by who reported them, as their reporters' roles stand now.
- An activity row keeps the ids of the scopes the read searched.
- A rule may be held for a second look.
- What forged reports and the old attribution left is healed (`heal`): a memory's usage counter
  is lowered to what its stored uses allow under the new weights, and a scope's "found nothing"
  rows that came from reads which did not name that scope (attributed by membership) go.
"""

import django.contrib.postgres.fields
from django.db import migrations, models


WEIGH = """
UPDATE memories_memoryuse u SET full_weight = true
FROM memories_memory m, scopes_membership ms
WHERE m.id = u.memory_id AND ms.scope_id = m.scope_id AND ms.user_id = u.used_by_id
  AND ms.role >= 20
  AND NOT EXISTS (
    SELECT 1 FROM scopes_apitoken t WHERE t.id = u.used_by_token_id AND t.scope_restricted
  )
"""


# A counter never rises here: each reporter's light uses count at most 3 times (the rule in
# memories.rules.usage), full-weight ones all; a memory found wrong keeps its lower counter.
LOWER_USES = """
UPDATE memories_memoryusage g SET uses = LEAST(g.uses, allowed.n)
FROM (
  SELECT memory_id, sum(CASE WHEN full_weight THEN n ELSE LEAST(n, 3) END) AS n
  FROM (
    SELECT memory_id, used_by_id, full_weight, count(*) AS n
    FROM memories_memoryuse WHERE NOT wrong GROUP BY memory_id, used_by_id, full_weight
  ) per_reporter
  GROUP BY memory_id
) allowed
WHERE allowed.memory_id = g.memory_id AND g.uses > allowed.n
"""

# A read that named its scopes lists them; one that named none (all readable scopes) was put in
# every scope its user belonged to at fold time, which may not be what it searched.
DROP_MISATTRIBUTED = """
DELETE FROM memories_emptyread e
USING memories_activitylog a, scopes_scope s
WHERE a.id = e.activity_id AND s.id = e.scope_id AND NOT jsonb_exists(a.scopes, s.public_id)
"""


def heal(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(WEIGH)
        cursor.execute(LOWER_USES)
        cursor.execute(DROP_MISATTRIBUTED)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0023_import_claims"),
        ("scopes", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="activitylog",
            name="searched_scopes",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.BigIntegerField(), blank=True, default=list, size=None
            ),
        ),
        migrations.AddField(
            model_name="memoryuse",
            name="full_weight",
            field=models.BooleanField(default=False, verbose_name="full weight"),
        ),
        migrations.AlterField(
            model_name="rule",
            name="status",
            field=models.CharField(
                choices=[
                    ("candidate", "Candidate"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("held", "Held for a second look"),
                ],
                default="candidate",
                max_length=16,
                verbose_name="status",
            ),
        ),
        migrations.RunPython(heal, migrations.RunPython.noop),
    ]
