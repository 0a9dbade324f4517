"""Usage that cannot be forged and insights that stay in their scope (issue 37).

- A use counts towards rule candidates in full only when a writer or admin of the memory's
  scope reported it through a credential not restricted to scopes; uses already stored are
  weighed by who reported them, as their reporters' roles stand now.
- An activity row keeps the ids of the scopes the read searched.
- A rule may be held for a second look.
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
        migrations.RunSQL(WEIGH, migrations.RunSQL.noop),
    ]
