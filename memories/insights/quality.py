"""A scope's quality figures: the queries that found nothing (to the scope's admins acting as
themselves all of them, to other members and to every other credential only their own), the
most recalled memories, those never recalled in 90 days and those disputed. Each list is read
with its count in one statement; the scope and the reader's role come from the access module."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.db import connection
from django.utils import timezone

from memories.insights.schemas import EmptyQueryOut, MemoryLineOut, QualityOut
from memories.models import ConflictStatus, EmptyRead
from scopes import access
from scopes.models import Role, Scope
from zeromemory.core.actor import Actor

NEVER_RECALLED_DAYS = 90
LIST_LENGTH = 10

# The top of the period in SQL, joined to its memories in the same statement.
_MOST_RECALLED = """
SELECT m.public_id, m.kind_id, m.content, top.times
FROM (
    SELECT memory_id, sum(times) AS times FROM memories_dailyrecalled
    WHERE scope_id = %(scope)s AND day >= %(since)s
    GROUP BY memory_id ORDER BY times DESC, memory_id LIMIT %(length)s
) top
JOIN memories_memory m ON m.id = top.memory_id AND m.valid
ORDER BY top.times DESC, top.memory_id
"""
# Valid memories older than the cutoff that no daily row of the last 90 days hands out, the
# oldest first, with how many there are (a window count over the rows before the limit).
# Counted as the scope's valid memories older than the cutoff (an index-only range of
# `memory_scope_recent`) less those of them recalled in the period (the period's rows of
# `daily_recalled_scope_day`: a memory's rows carry its own scope, which never changes), and
# sampled oldest first through the same index, stopping at the sample's length. Counting by
# reading every such row and its recalls grew with the scope.
_NEVER_RECALLED = """
WITH recalled AS (
    SELECT DISTINCT r.memory_id FROM memories_dailyrecalled r
    WHERE r.scope_id = %(scope)s AND r.day >= %(recent)s
), counted AS (
    SELECT (SELECT count(*) FROM memories_memory m
            WHERE m.scope_id = %(scope)s AND m.valid AND m.created_at < %(cutoff)s)
         - (SELECT count(*) FROM recalled JOIN memories_memory m ON m.id = recalled.memory_id
            WHERE m.scope_id = %(scope)s AND m.valid AND m.created_at < %(cutoff)s) AS never
)
SELECT m.public_id, m.kind_id, m.content, counted.never
FROM counted CROSS JOIN LATERAL (
    SELECT m.id, m.public_id, m.kind_id, m.content, m.created_at FROM memories_memory m
    WHERE m.scope_id = %(scope)s AND m.valid AND m.created_at < %(cutoff)s
      AND NOT EXISTS (
        SELECT 1 FROM memories_dailyrecalled r WHERE r.memory_id = m.id AND r.day >= %(recent)s
      )
    ORDER BY m.created_at, m.id LIMIT %(length)s
) m
ORDER BY m.created_at, m.id
"""
_DISPUTED = """
SELECT m.public_id, m.kind_id, m.content, count(*) OVER ()
FROM memories_memory m
WHERE m.valid AND m.id IN (
    SELECT memory_a_id FROM memories_conflict WHERE scope_id = %(scope)s AND status = %(open)s
    UNION ALL
    SELECT memory_b_id FROM memories_conflict WHERE scope_id = %(scope)s AND status = %(open)s
)
ORDER BY m.id DESC LIMIT %(length)s
"""


def _lines(rows: list[tuple]) -> list[MemoryLineOut]:
    return [MemoryLineOut(id=row[0], kind=row[1], content=row[2], times=row[3]) for row in rows]


def _counted(rows: list[tuple]) -> tuple[int, list[MemoryLineOut]]:
    """The count (each row's last column) and the lines of a counted sample."""
    lines = [MemoryLineOut(id=pk, kind=kind, content=content) for pk, kind, content, _ in rows]
    return (rows[0][3] if rows else 0), lines


def scope_quality(
    *, actor: Actor, scope: Scope, role: int | None, since: date, totals: dict[str, int]
) -> QualityOut:
    """The quality section for `actor` (whose `role` in `scope` the caller read), over the
    period from `since`, with the summed daily figures `totals`."""
    # Others' queries: an admin in a session or through a full token of theirs; never a
    # restricted or read-only token or an OAuth grant.
    is_admin = role is not None and role >= Role.ADMIN and access.acts_as_self(actor)
    empty = EmptyRead.objects.filter(
        scope=scope, created_at__gte=datetime.combine(since, time.min, tzinfo=UTC)
    )
    if not is_admin:
        empty = empty.filter(user=actor.user)
    empty_rows = empty.order_by("-created_at").values_list(
        "query", "operation", "created_at", "user__username", "query_lang"
    )[:LIST_LENGTH]
    params = {
        "scope": scope.pk,
        "since": since,
        "length": LIST_LENGTH,
        "cutoff": timezone.now() - timedelta(days=NEVER_RECALLED_DAYS),
        "recent": timezone.now().astimezone(UTC).date() - timedelta(days=NEVER_RECALLED_DAYS - 1),
        "open": ConflictStatus.OPEN.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(_MOST_RECALLED, params)
        most = _lines(cursor.fetchall())
        cursor.execute(_NEVER_RECALLED, params)
        never_count, never_sample = _counted(cursor.fetchall())
        cursor.execute(_DISPUTED, params)
        disputed_count, disputed_sample = _counted(cursor.fetchall())

    reads = totals["recalls"] + totals["contexts"]
    return QualityOut(
        reads=reads,
        empty_reads=totals["empty_reads"],
        empty_rate=round(totals["empty_reads"] / reads, 4) if reads else 0.0,
        empty_queries=[
            EmptyQueryOut(
                query=query,
                operation=operation,
                at=at,
                by=username,
                not_english=bool(lang),
                lang=lang,
            )
            for query, operation, at, username, lang in empty_rows
        ],
        empty_queries_of_others_hidden=not is_admin,
        most_recalled=most,
        never_recalled=never_count,
        never_recalled_sample=never_sample,
        disputed=disputed_count,
        disputed_sample=disputed_sample,
    )
