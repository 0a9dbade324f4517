"""The usage models are named for what they hold: `MemoryUse` (one reported use per conversation)
becomes `ReportedUse`, `MemoryUsage` (the counters per memory that recall's boost reads) becomes
`UsageCounter`. The tables keep their names, so this changes no row and no table."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0025_heal_instants")]

    operations = [
        # Pin the tables first, so the renames below find the same table before and after.
        migrations.AlterModelTable(name="memoryuse", table="memories_memoryuse"),
        migrations.AlterModelTable(name="memoryusage", table="memories_memoryusage"),
        migrations.RenameModel(old_name="MemoryUse", new_name="ReportedUse"),
        migrations.RenameModel(old_name="MemoryUsage", new_name="UsageCounter"),
        migrations.AlterModelOptions(name="reporteduse", options={"verbose_name": "reported use"}),
    ]
