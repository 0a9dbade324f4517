"""Time passing for the validity tests: everything recorded so far moves back by some days, so a
test writes, edits, forgets or supersedes "on day N" at the real clock and asks `as_of` days that
are then in the past. Every timestamp a memory's history is made of moves together."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

_COLUMNS = {
    "memories_memory": (
        "created_at",
        "updated_at",
        "valid_from",
        "valid_until",
        "forgotten_at",
        "superseded_at",
        "restored_at",
        "confirmed_at",
        "last_recalled_at",
    ),
    "memories_validityperiod": ("valid_from", "valid_until"),
    "memories_memoryversion": ("created_at",),
    "memories_provenance": ("created_at",),
    "memories_conflictaction": ("created_at", "undone_at"),
}


class Clock:
    """Day 0 is when the clock is made; `days_pass(n)` moves the recorded past n days back."""

    def __init__(self) -> None:
        self.today = 0
        self.start = timezone.now()

    def days_pass(self, days: int) -> None:
        with connection.cursor() as cursor:
            for table, columns in _COLUMNS.items():
                sets = ", ".join(f"{c} = {c} - make_interval(days => %s)" for c in columns)
                cursor.execute(f"UPDATE {table} SET {sets}", [days] * len(columns))  # noqa: S608
        self.today += days

    def day(self, n: float) -> datetime:
        """The instant of day n (n ≤ today), at the real clock's time of day 0 plus n days."""
        return self.start + timedelta(days=n - self.today)

    def iso(self, n: float) -> str:
        return self.day(n).isoformat()
