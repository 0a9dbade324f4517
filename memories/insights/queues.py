"""A scope's health (its queues, read through their own indexes, and capture's yield) and its
LLM cost per path and day against the budgets. The scope comes from the access module."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

from django.db import connection
from django.utils import timezone

from memories import spend
from memories.insights.schemas import (
    CaptureYieldOut,
    HealthOut,
    PathCostOut,
    QueueOut,
    SpendDayOut,
)
from memories.models import (
    ChunkStatus,
    ConflictStatus,
    LlmPath,
    TranslationStatus,
)
from scopes.models import Scope

# Every queue count of a scope in one round trip: each table is read once, through its
# (scope, status) rows only.
_QUEUES = """
SELECT c.review_open, c.review_oldest, c.judge_pending, c.judge_failed,
       m.translation_pending, m.translation_failed, ch.extraction_pending, ch.extraction_failed
FROM (
    SELECT count(*) FILTER (WHERE status = %(open)s) AS review_open,
           min(created_at) FILTER (WHERE status = %(open)s) AS review_oldest,
           count(*) FILTER (WHERE status = ANY(%(judge_pending)s)) AS judge_pending,
           count(*) FILTER (WHERE status = %(judge_failed)s) AS judge_failed
    FROM memories_conflict
    WHERE scope_id = %(scope)s AND status = ANY(%(conflict_statuses)s)
) c, (
    SELECT count(*) FILTER (WHERE translation_status = %(translation_pending)s)
               AS translation_pending,
           count(*) FILTER (WHERE translation_status = %(translation_failed)s)
               AS translation_failed
    FROM memories_memory
    WHERE scope_id = %(scope)s AND translation_status = ANY(%(translation_statuses)s)
) m, (
    SELECT count(*) FILTER (WHERE status = ANY(%(chunk_pending)s)) AS extraction_pending,
           count(*) FILTER (WHERE status = %(chunk_failed)s) AS extraction_failed
    FROM memories_chunk
    WHERE scope_id = %(scope)s AND status = ANY(%(chunk_statuses)s)
) ch
"""
_SPENT = """
SELECT path, day, sum(tokens), sum(calls) FROM memories_llmspend
WHERE scope_id = %(scope)s AND day >= %(since)s
GROUP BY path, day
"""
_JUDGE_PENDING = [ConflictStatus.PENDING.value, ConflictStatus.WAITING_FOR_KEY.value]
_CHUNK_PENDING = [
    ChunkStatus.PENDING.value,
    ChunkStatus.WAITING_FOR_KEY.value,
    ChunkStatus.DEFERRED.value,
]


def _queue_counts(scope: Scope) -> tuple:
    params = {
        "scope": scope.pk,
        "open": ConflictStatus.OPEN.value,
        "judge_pending": _JUDGE_PENDING,
        "judge_failed": ConflictStatus.FAILED.value,
        "conflict_statuses": [
            ConflictStatus.OPEN.value,
            *_JUDGE_PENDING,
            ConflictStatus.FAILED.value,
        ],
        "translation_pending": TranslationStatus.PENDING.value,
        "translation_failed": TranslationStatus.FAILED.value,
        "translation_statuses": [TranslationStatus.PENDING.value, TranslationStatus.FAILED.value],
        "chunk_pending": _CHUNK_PENDING,
        "chunk_failed": ChunkStatus.FAILED.value,
        "chunk_statuses": [*_CHUNK_PENDING, ChunkStatus.FAILED.value],
    }
    with connection.cursor() as cursor:
        cursor.execute(_QUEUES, params)
        return cursor.fetchone()


def scope_health(*, scope: Scope, rows: list[dict]) -> HealthOut:
    """The scope's queues now, and capture's yield over the daily rows `rows` (already read,
    as the daily figures' columns by name)."""
    (
        review_open,
        oldest,
        judge_pending,
        judge_failed,
        translation_pending,
        translation_failed,
        extraction_pending,
        extraction_failed,
    ) = _queue_counts(scope)
    dropped: Counter[str] = Counter()
    for row in rows:
        dropped.update({reason: int(n) for reason, n in (row["chunks_dropped"] or {}).items()})
    return HealthOut(
        review_open=review_open,
        review_oldest_days=(
            round((timezone.now() - oldest).total_seconds() / 86400, 1) if oldest else None
        ),
        translations=QueueOut(pending=translation_pending, failed=translation_failed),
        extractions=QueueOut(pending=extraction_pending, failed=extraction_failed),
        judgements=QueueOut(pending=judge_pending, failed=judge_failed),
        capture=CaptureYieldOut(
            chunks=sum(row["chunks"] for row in rows),
            kept=sum(row["chunks_kept"] for row in rows),
            dropped=dict(dropped),
        ),
    )


def scope_cost(*, scope: Scope, since: date, days: int) -> list[PathCostOut]:
    """LLM tokens per path and day since `since`, beside each path's daily budget."""
    spent: dict[str, dict[date, tuple[int, int]]] = {path: {} for path in LlmPath.values}
    with connection.cursor() as cursor:
        cursor.execute(_SPENT, {"scope": scope.pk, "since": since})
        for path, day, tokens, calls in cursor.fetchall():
            spent[path][day] = (tokens, calls)
    period = [since + timedelta(days=offset) for offset in range(days)]
    out = []
    for path in LlmPath.values:
        series = []
        for day in period:
            tokens, calls = spent[path].get(day, (0, 0))
            series.append(SpendDayOut(day=day, tokens=tokens, calls=calls))
        out.append(
            PathCostOut(
                path=path,
                budget_per_day=spend.budget_of(path),
                budget_per=spend.budget_per(path),
                tokens=sum(day.tokens for day in series),
                calls=sum(day.calls for day in series),
                days=series,
            )
        )
    return out
