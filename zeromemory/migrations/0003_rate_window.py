from django.db import migrations

# Counters of the API rate limit (zeromemory.core.throttling): one row per user.
CREATE = """
CREATE UNLOGGED TABLE IF NOT EXISTS zm_rate_window (
    key text PRIMARY KEY,
    window_start bigint NOT NULL,
    hits integer NOT NULL
)
"""


class Migration(migrations.Migration):
    dependencies = [("zeromemory", "0002_schedules")]
    operations = [migrations.RunSQL(CREATE, "DROP TABLE IF EXISTS zm_rate_window")]
