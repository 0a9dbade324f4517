"""Heal the instants of memories stored before reads bounded their time arithmetic.

An archive import could store any instant a memory's file named: a `created` of 1970 or of
year 1, or one in the far future. Reads now answer for any instant, but such a memory still
claims an age and a history the server never saw: `as_of` finds it before its scope existed,
and a future one never ages. This pass brings every instant the server itself keeps about a
memory (created, valid from and until, forgotten, superseded, restored, confirmed, last
recalled; its validity periods, its versions and its usage's last use) into what the server
could have seen:

- before 2000-01-01 UTC (the earliest instant `as_of` accepts): the creation of the memory's
  scope (itself brought into 2000-01-01 .. now);
- after now: now;
- a period that would then end before it starts ends where it starts.

Instants inside those bounds are left as they are, so a memory imported with an older but
plausible date keeps it. What an archive claimed stays in the memory's provenance.
"""

from django.db import migrations

FLOOR = "'2000-01-01T00:00:00Z'::timestamptz"
NOW = "%(now)s::timestamptz"


def _clamp(column: str, earliest: str = "r.earliest") -> str:
    return (
        f"CASE WHEN {column} < {FLOOR} THEN {earliest} "
        f"WHEN {column} > {NOW} THEN {NOW} ELSE {column} END"
    )


def _outside(columns: list[str], alias: str) -> str:
    return " OR ".join(
        f"{alias}.{column} < {FLOOR} OR {alias}.{column} > {NOW}" for column in columns
    )


# Each memory's replacement for an instant before the floor: its scope's creation, bounded.
EARLIEST = f"""
SELECT m.id, least(greatest(s.created_at, {FLOOR}), {NOW}) AS earliest
FROM memories_memory m JOIN scopes_scope s ON s.id = m.scope_id
"""

MEMORY_COLUMNS = [
    "created_at",
    "valid_from",
    "valid_until",
    "forgotten_at",
    "superseded_at",
    "restored_at",
    "confirmed_at",
    "last_recalled_at",
]
SETS = ", ".join(f"{column} = {_clamp('m.' + column)}" for column in MEMORY_COLUMNS)
PERIOD_SETS = f"valid_from = {_clamp('p.valid_from')}, valid_until = {_clamp('p.valid_until')}"
# One statement each, all with the same instant for now (taken once, before the first).
STATEMENTS = [
    f"""UPDATE memories_memory m SET {SETS} FROM ({EARLIEST}) r
    WHERE r.id = m.id AND ({_outside(MEMORY_COLUMNS, "m")})""",
    "UPDATE memories_memory SET valid_until = valid_from WHERE valid_until < valid_from",
    f"""UPDATE memories_validityperiod p SET {PERIOD_SETS} FROM ({EARLIEST}) r
    WHERE r.id = p.memory_id AND ({_outside(["valid_from", "valid_until"], "p")})""",
    "UPDATE memories_validityperiod SET valid_until = valid_from WHERE valid_until < valid_from",
    f"""UPDATE memories_memoryversion v SET created_at = {_clamp("v.created_at")}
    FROM ({EARLIEST}) r WHERE r.id = v.memory_id AND ({_outside(["created_at"], "v")})""",
    f"""UPDATE memories_memoryusage u SET last_used_at = {_clamp("u.last_used_at")}
    FROM ({EARLIEST}) r WHERE r.id = u.memory_id AND ({_outside(["last_used_at"], "u")})""",
]


def heal(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        now = cursor.fetchone()[0]
        for statement in STATEMENTS:
            cursor.execute(statement, {"now": now})


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0024_rules_and_insights_scoped"),
        ("scopes", "0001_initial"),
    ]

    operations = [migrations.RunPython(heal, migrations.RunPython.noop)]
