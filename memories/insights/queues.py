"""A scope's health (its queues, read through their own indexes, and capture's yield) and its
LLM cost per path and day against the budgets. The scope comes from the access module."""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

from django.db.models import Count, Min
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
    Chunk,
    ChunkStatus,
    Conflict,
    ConflictStatus,
    DailyFigures,
    LlmPath,
    LlmSpend,
    Memory,
    TranslationStatus,
)
from scopes.models import Scope


def _queue(rows, *, pending: tuple[str, ...], failed: str) -> QueueOut:
    counts = Counter(
        dict(rows.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    )
    return QueueOut(pending=sum(counts[s] for s in pending), failed=counts[failed])


def scope_health(*, scope: Scope, rows: list[DailyFigures]) -> HealthOut:
    """The scope's queues now, and capture's yield over the daily rows `rows` (already read)."""
    review = Conflict.objects.filter(scope=scope, status=ConflictStatus.OPEN).aggregate(
        n=Count("id"), oldest=Min("created_at")
    )
    oldest = review["oldest"]
    translations = Memory.objects.filter(scope=scope).exclude(
        translation_status__in=[TranslationStatus.DONE, TranslationStatus.SKIPPED]
    )
    translation_counts = Counter(
        dict(
            translations.values_list("translation_status")
            .annotate(n=Count("id"))
            .values_list("translation_status", "n")
        )
    )
    chunks = Chunk.objects.filter(
        scope=scope,
        status__in=[
            ChunkStatus.PENDING,
            ChunkStatus.WAITING_FOR_KEY,
            ChunkStatus.DEFERRED,
            ChunkStatus.FAILED,
        ],
    )
    judgements = Conflict.objects.filter(
        scope=scope,
        status__in=[ConflictStatus.PENDING, ConflictStatus.WAITING_FOR_KEY, ConflictStatus.FAILED],
    )
    dropped: Counter[str] = Counter()
    for row in rows:
        dropped.update({reason: int(n) for reason, n in (row.chunks_dropped or {}).items()})
    return HealthOut(
        review_open=review["n"],
        review_oldest_days=(
            round((timezone.now() - oldest).total_seconds() / 86400, 1) if oldest else None
        ),
        translations=QueueOut(
            pending=translation_counts[TranslationStatus.PENDING],
            failed=translation_counts[TranslationStatus.FAILED],
        ),
        extractions=_queue(
            chunks,
            pending=(ChunkStatus.PENDING, ChunkStatus.WAITING_FOR_KEY, ChunkStatus.DEFERRED),
            failed=ChunkStatus.FAILED,
        ),
        judgements=_queue(
            judgements,
            pending=(ConflictStatus.PENDING, ConflictStatus.WAITING_FOR_KEY),
            failed=ConflictStatus.FAILED,
        ),
        capture=CaptureYieldOut(
            chunks=sum(row.chunks for row in rows),
            kept=sum(row.chunks_kept for row in rows),
            dropped=dict(dropped),
        ),
    )


def scope_cost(*, scope: Scope, since: date, days: int) -> list[PathCostOut]:
    """LLM tokens per path and day since `since`, beside each path's daily budget."""
    spent: dict[str, dict[date, LlmSpend]] = {path: {} for path in LlmPath.values}
    for row in LlmSpend.objects.filter(scope=scope, day__gte=since):
        spent[row.path][row.day] = row
    out = []
    for path in LlmPath.values:
        series = [
            SpendDayOut(
                day=day,
                tokens=spent[path][day].tokens if day in spent[path] else 0,
                calls=spent[path][day].calls if day in spent[path] else 0,
            )
            for day in (since + timedelta(days=offset) for offset in range(days))
        ]
        out.append(
            PathCostOut(
                path=path,
                budget_per_day=spend.budget_of(path),
                budget_per="user" if path == LlmPath.EXTRACTION else "scope",
                tokens=sum(day.tokens for day in series),
                calls=sum(day.calls for day in series),
                days=series,
            )
        )
    return out
