"""Embeddings stay in the row: a memory's or a window's embedding (1,544 bytes at 384
dimensions) beside its text and search vector made most rows pass PostgreSQL's default toasting
threshold (about 2 kB), so the embedding went out of line and every exact distance (a recall in
a small scope, the hygiene scan, a dedup check) read it back from the TOAST table. With the
threshold at its maximum, a row is only toasted when it would not fit in a page.

The setting applies to rows written from now on; `VACUUM FULL memories_memory` (and
`memories_memorywindow`) rewrites the older ones in place when an operator chooses to.
"""

from django.db import migrations

TABLES = ("memories_memory", "memories_memorywindow")


class Migration(migrations.Migration):
    dependencies = [("memories", "0019_export_jobs")]

    operations = [
        migrations.RunSQL(
            sql=[f"ALTER TABLE {table} SET (toast_tuple_target = 8160)" for table in TABLES],
            reverse_sql=[f"ALTER TABLE {table} RESET (toast_tuple_target)" for table in TABLES],
        )
    ]
