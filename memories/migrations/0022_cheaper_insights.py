"""Two things that make the insights answer cheaper.

- Each scope's sessions and clients with the last day it served them, filled from the daily
  visitor rows, so that the answer counts a period's distinct visitors from one row each (the
  fold keeps these rows from now on, and prunes those older than the longest period).
- The daily recalled rows' (scope, day) index also holds the memory and the count, so that the
  most recalled memories of a period are summed from the index alone.
"""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
INSERT INTO memories_lastvisit (scope_id, kind, key, day)
SELECT scope_id, kind, key, max(day) FROM memories_dailyvisitor GROUP BY scope_id, kind, key
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0021_inline_embeddings'),
        ('scopes', '0001_initial'),
    ]

    operations = [
        migrations.CreateModel(
            name='LastVisit',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=8)),
                ('key', models.CharField(max_length=200)),
                ('day', models.DateField()),
            ],
        ),
        migrations.RemoveIndex(
            model_name='dailyrecalled',
            name='daily_recalled_scope_day',
        ),
        migrations.AddIndex(
            model_name='dailyrecalled',
            index=models.Index(fields=['scope', 'day'], include=('memory', 'times'), name='daily_recalled_scope_day'),
        ),
        migrations.AddField(
            model_name='lastvisit',
            name='scope',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='scopes.scope'),
        ),
        migrations.AddIndex(
            model_name='lastvisit',
            index=models.Index(fields=['scope', 'day', 'kind'], name='last_visit_scope_day'),
        ),
        migrations.AddConstraint(
            model_name='lastvisit',
            constraint=models.UniqueConstraint(fields=('scope', 'kind', 'key'), name='last_visit_one_per_key'),
        ),
        migrations.RunSQL(sql=FILL, reverse_sql=migrations.RunSQL.noop),
    ]
