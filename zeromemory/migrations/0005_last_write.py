from django.db import migrations

# When each user last wrote (zeromemory.core.routing): their reads go to the primary for a few
# seconds after it. UNLOGGED like the rate-limit rows: a crash forgets only a few seconds.
CREATE = """
CREATE UNLOGGED TABLE IF NOT EXISTS zm_last_write (
    user_id bigint PRIMARY KEY,
    written_at timestamptz NOT NULL
)
"""


class Migration(migrations.Migration):
    dependencies = [("zeromemory", "0004_worker_heartbeat")]
    operations = [migrations.RunSQL(CREATE, "DROP TABLE IF EXISTS zm_last_write")]
