"""The fold: a scheduled task that recomputes the insights' daily rows of the recent days from
the activity log, the memories and the chunks, so that an answer reads at most one row a day
(plus the recalled memories of its days, and one row per session or client it counts: the last
day each was seen), whatever the size of the activity log.

Each day is recomputed whole, in one transaction (delete, then insert from the sources), so a
fold can run again at any time and a late row of yesterday is counted on the next run.

A read (recall, build_context, briefing) counts in every scope it touched: the scopes it named,
the scopes of the memories it handed out, and, for an empty read over every scope the caller
could read, the scopes it searched, as its credential allowed at that moment (kept on its
activity row; never the memberships at fold time, which would show a query made before joining
a scope, after leaving it, or through a token restricted to another scope). Its tokens are
shared between the scopes in proportion to the memories each got.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.db import connection, transaction
from django.utils import timezone

from memories.canonical.language import detect_language
from memories.insights.answers import PERIODS
from memories.models import EmptyRead, LastVisit

READS = ("recall", "build_context", "briefing")

_TOUCHED = """
WITH reads AS (
    SELECT a.id, a.user_id, a.operation, a.outcome, a.scopes, a.results, a.tokens,
           a.conversation_id, a.client_name, a.query, a.created_at, a.searched_scopes
    FROM memories_activitylog a
    WHERE a.created_at >= %(start)s AND a.created_at < %(end)s
      AND a.operation IN ('recall', 'build_context', 'briefing') AND a.outcome <> 'error'
), served AS (
    SELECT r.id AS activity_id, m.scope_id, m.id AS memory_id
    FROM reads r
    CROSS JOIN LATERAL jsonb_array_elements(r.results) AS e(item)
    JOIN memories_memory m ON m.public_id = e.item ->> 'id'
), touched AS (
    SELECT activity_id, scope_id FROM served
    UNION
    SELECT r.id, s.id
    FROM reads r
    CROSS JOIN LATERAL jsonb_array_elements_text(r.scopes) AS p(public_id)
    JOIN scopes_scope s ON s.public_id = p.public_id
    UNION
    SELECT r.id, s.id
    FROM reads r
    CROSS JOIN LATERAL unnest(r.searched_scopes) AS p(scope_id)
    JOIN scopes_scope s ON s.id = p.scope_id
    WHERE jsonb_array_length(r.scopes) = 0 AND jsonb_array_length(r.results) = 0
), got AS (
    SELECT activity_id, scope_id, count(*) AS got FROM served GROUP BY activity_id, scope_id
), total AS (
    SELECT activity_id, count(*) AS total FROM served GROUP BY activity_id
), shares AS (
    SELECT t.activity_id, t.scope_id, coalesce(g.got, 0) AS got, coalesce(n.total, 0) AS total
    FROM touched t
    LEFT JOIN got g ON g.activity_id = t.activity_id AND g.scope_id = t.scope_id
    LEFT JOIN total n ON n.activity_id = t.activity_id
)
"""

_FIGURES = (
    _TOUCHED
    + """
INSERT INTO memories_dailyfigures
    (scope_id, day, recalls, contexts, briefings, empty_reads, memories_served, tokens_served,
     written_human, written_agent, written_capture, chunks, chunks_kept, chunks_dropped)
SELECT sh.scope_id, %(day)s,
       count(*) FILTER (WHERE r.operation = 'recall'),
       count(*) FILTER (WHERE r.operation = 'build_context'),
       count(*) FILTER (WHERE r.operation = 'briefing'),
       count(*) FILTER (WHERE r.operation <> 'briefing' AND r.outcome = 'empty'),
       coalesce(sum(sh.got), 0),
       coalesce(sum(CASE WHEN sh.total > 0 THEN r.tokens * sh.got / sh.total
                         ELSE 0 END), 0),
       0, 0, 0, 0, 0, '{}'::jsonb
FROM shares sh JOIN reads r ON r.id = sh.activity_id
GROUP BY sh.scope_id
"""
)

_VISITORS = (
    _TOUCHED
    + """
INSERT INTO memories_dailyvisitor (scope_id, day, kind, key)
SELECT DISTINCT t.scope_id, %(day)s, 'session', r.conversation_id
FROM touched t JOIN reads r ON r.id = t.activity_id WHERE r.conversation_id <> ''
UNION
SELECT DISTINCT t.scope_id, %(day)s, 'client', r.client_name
FROM touched t JOIN reads r ON r.id = t.activity_id WHERE r.client_name <> ''
"""
)

# The last day of each session and client the day saw: later than what is stored, it moves on.
_SEEN = """
INSERT INTO memories_lastvisit AS l (scope_id, kind, key, day)
SELECT scope_id, kind, key, day FROM memories_dailyvisitor WHERE day = %(day)s
ON CONFLICT (scope_id, kind, key) DO UPDATE SET day = greatest(l.day, EXCLUDED.day)
"""

# A session or client whose last day is this day, but which this day no longer has (its reads
# were erased since the last fold), goes back to the last day it still has, or away.
_UNSEEN = """
WITH unseen AS (
    SELECT l.id, (
        SELECT max(v.day) FROM memories_dailyvisitor v
        WHERE v.scope_id = l.scope_id AND v.kind = l.kind AND v.key = l.key
    ) AS day
    FROM memories_lastvisit l
    WHERE l.day = %(day)s AND NOT EXISTS (
        SELECT 1 FROM memories_dailyvisitor v
        WHERE v.scope_id = l.scope_id AND v.day = l.day AND v.kind = l.kind AND v.key = l.key
    )
), moved AS (
    UPDATE memories_lastvisit l SET day = unseen.day
    FROM unseen WHERE l.id = unseen.id AND unseen.day IS NOT NULL
)
DELETE FROM memories_lastvisit l USING unseen WHERE l.id = unseen.id AND unseen.day IS NULL
"""

_RECALLED = (
    _TOUCHED
    + """
INSERT INTO memories_dailyrecalled (scope_id, day, memory_id, times)
SELECT scope_id, %(day)s, memory_id, count(*) FROM served GROUP BY scope_id, memory_id
"""
)

_EMPTY = (
    _TOUCHED
    + """
SELECT t.scope_id, r.id, r.user_id, r.operation, r.query, r.created_at
FROM touched t JOIN reads r ON r.id = t.activity_id
WHERE r.outcome = 'empty' AND r.operation <> 'briefing'
"""
)

# Memories written and chunks extracted that day, into the rows the reads made (or new ones).
_WRITTEN = """
INSERT INTO memories_dailyfigures AS f
    (scope_id, day, recalls, contexts, briefings, empty_reads, memories_served, tokens_served,
     written_human, written_agent, written_capture, chunks, chunks_kept, chunks_dropped)
SELECT m.scope_id, %(day)s, 0, 0, 0, 0, 0, 0,
       count(*) FILTER (WHERE m.author_kind = 'human'),
       count(*) FILTER (WHERE m.author_kind = 'agent'),
       count(*) FILTER (WHERE m.author_kind IN ('capture', 'watcher')),
       0, 0, '{}'::jsonb
FROM memories_memory m
WHERE m.created_at >= %(start)s AND m.created_at < %(end)s
GROUP BY m.scope_id
ON CONFLICT (scope_id, day) DO UPDATE SET
    written_human = EXCLUDED.written_human,
    written_agent = EXCLUDED.written_agent,
    written_capture = EXCLUDED.written_capture
"""

_CHUNKS = """
WITH chunks AS (
    SELECT c.scope_id, count(*) AS n, sum(c.kept) AS kept
    FROM memories_chunk c
    WHERE c.extracted_at >= %(start)s AND c.extracted_at < %(end)s
    GROUP BY c.scope_id
), dropped AS (
    SELECT scope_id, jsonb_object_agg(reason, n) AS by_reason
    FROM (
        SELECT c.scope_id, d.key AS reason, sum((d.value)::int) AS n
        FROM memories_chunk c CROSS JOIN LATERAL jsonb_each_text(c.dropped) AS d(key, value)
        WHERE c.extracted_at >= %(start)s AND c.extracted_at < %(end)s
          AND d.value ~ '^[0-9]+$'
        GROUP BY c.scope_id, d.key
    ) per_reason
    GROUP BY scope_id
)
INSERT INTO memories_dailyfigures AS f
    (scope_id, day, recalls, contexts, briefings, empty_reads, memories_served, tokens_served,
     written_human, written_agent, written_capture, chunks, chunks_kept, chunks_dropped)
SELECT ch.scope_id, %(day)s, 0, 0, 0, 0, 0, 0, 0, 0, 0, ch.n, ch.kept,
       coalesce(d.by_reason, '{}'::jsonb)
FROM chunks ch LEFT JOIN dropped d ON d.scope_id = ch.scope_id
ON CONFLICT (scope_id, day) DO UPDATE SET
    chunks = EXCLUDED.chunks,
    chunks_kept = EXCLUDED.chunks_kept,
    chunks_dropped = EXCLUDED.chunks_dropped
"""


def _bounds(day: date) -> dict[str, object]:
    start = datetime.combine(day, time.min, tzinfo=UTC)
    return {"day": day, "start": start, "end": start + timedelta(days=1)}


def fold_day(*, day: date) -> None:
    """Recompute one UTC day's rows of every scope."""
    params = _bounds(day)
    with transaction.atomic(), connection.cursor() as cursor:
        for table in ("dailyfigures", "dailyvisitor", "dailyrecalled"):
            cursor.execute(f"DELETE FROM memories_{table} WHERE day = %s", [day])  # noqa: S608
        cursor.execute(_FIGURES, params)
        cursor.execute(_WRITTEN, params)
        cursor.execute(_CHUNKS, params)
        cursor.execute(_VISITORS, params)
        cursor.execute(_SEEN, params)
        cursor.execute(_UNSEEN, params)
        cursor.execute(_RECALLED, params)
        cursor.execute(_EMPTY, params)
        empty = cursor.fetchall()
    # The day's queries that found nothing are recomputed too: a stored one this fold no longer
    # attributes to its scope (its read is gone, or was counted there by an older fold) goes.
    wanted = {(row[0], row[1]) for row in empty}
    day_rows = EmptyRead.objects.filter(
        created_at__gte=params["start"], created_at__lt=params["end"]
    ).values_list("id", "scope_id", "activity_id")
    gone = [pk for pk, scope, activity in day_rows if (scope, activity) not in wanted]
    EmptyRead.objects.filter(id__in=gone).delete()
    stored = set(
        EmptyRead.objects.filter(activity_id__in={row[1] for row in empty}).values_list(
            "scope_id", "activity_id"
        )
    )
    empty = [row for row in empty if (row[0], row[1]) not in stored]
    EmptyRead.objects.bulk_create(
        [
            EmptyRead(
                scope_id=scope_id,
                activity_id=activity_id,
                user_id=user_id,
                operation=operation,
                query=query,
                query_lang=_foreign_language(query),
                created_at=created_at,
            )
            for scope_id, activity_id, user_id, operation, query, created_at in empty
        ],
        ignore_conflicts=True,
    )


def _foreign_language(query: str) -> str:
    """The query's language when it is prose in another language than English, else ''."""
    decision = detect_language(query)
    return decision.lang if decision.needs_translation else ""


def insights_fold(*, days: int = 2, today: date | None = None) -> int:
    """Recompute the last `days` UTC days (today included); returns how many."""
    today = today or timezone.now().astimezone(UTC).date()
    for back in range(days - 1, -1, -1):
        fold_day(day=today - timedelta(days=back))
    # No answer counts a visitor last seen before the longest period began.
    LastVisit.objects.filter(day__lt=today - timedelta(days=max(PERIODS) - 1)).delete()
    return days
