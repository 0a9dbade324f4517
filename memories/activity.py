"""The activity log: one row per recall, build_context, briefing and remember.

Writes are one INSERT. For recall and build_context the same statement also bumps `recall_count`
of the memories handed out (it feeds the briefing's frequency factor), so the read path pays one
write round trip, not two. The bump skips rows another transaction holds locked: a count that is
one short now and then is worth more than a recall waiting behind a writer.

A failing log write is logged and swallowed: the answer the caller already has stays valid.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import QuerySet
from django.db.models.sql import InsertQuery
from django.utils import timezone
from psycopg.pq import TransactionStatus

from memories.models import ActivityLog, ActivityOperation, ActivityOutcome
from scopes.access import Actor
from zeromemory.errors import DomainError

logger = logging.getLogger(__name__)

_BUMP_RECALL_COUNT = """
WITH bumped AS (
    UPDATE memories_memory SET recall_count = recall_count + 1
    WHERE id IN (
        SELECT id FROM memories_memory WHERE id = ANY(%s::bigint[]) FOR UPDATE SKIP LOCKED
    )
)
"""


def elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _insert_sql(row: ActivityLog) -> tuple[str, list[Any]]:
    """The ORM's own INSERT for the row, so field preparation (JSON, defaults) stays Django's."""
    fields = [f for f in ActivityLog._meta.local_concrete_fields if not f.primary_key]
    query = InsertQuery(ActivityLog)
    query.insert_values(fields, [row])
    [(sql, params)] = query.get_compiler(connection=connection).as_sql()
    return sql, list(params)


def log_activity(
    *,
    actor: Actor,
    operation: str,
    query: str = "",
    scopes: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    results: Sequence[dict[str, Any]] = (),
    latency_ms: float,
    outcome: str | None = None,
    error_code: str = "",
    recalled_ids: Iterable[int] = (),
) -> None:
    """Append one activity row; `recalled_ids` (memory pks) get their recall_count bumped."""
    if outcome is None:
        outcome = ActivityOutcome.HIT if results else ActivityOutcome.EMPTY
    row = ActivityLog(
        surface=actor.surface,
        user=actor.user,
        token=actor.token,
        client_name=(actor.client_name or "")[:120],
        operation=operation,
        scopes=list(scopes),
        query=query,
        options=options or {},
        results=list(results),
        latency_ms=latency_ms,
        outcome=outcome,
        error_code=error_code[:32],
    )
    sql, params = _insert_sql(row)
    ids = sorted(set(recalled_ids))
    if ids:
        sql, params = _BUMP_RECALL_COUNT + sql, [ids, *params]
    try:
        # Inside a caller's transaction a savepoint keeps a failed insert from poisoning it;
        # outside one the statement commits on its own (no BEGIN/COMMIT round trips).
        if connection.in_atomic_block:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql, params)
        else:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
    except DatabaseError:
        logger.exception("could not write the activity row for %s", operation)


def _transaction_broken() -> bool:
    if connection.needs_rollback:
        return True
    raw = connection.connection
    return raw is not None and raw.info.transaction_status == TransactionStatus.INERROR


def log_failure(
    *,
    actor: Actor,
    operation: str,
    error: Exception,
    started: float,
    query: str = "",
    scopes: Sequence[str] = (),
    options: dict[str, Any] | None = None,
) -> None:
    """Record a refused or failed call (bad input, a foreign scope, a server error)."""
    if not isinstance(scopes, list | tuple):
        scopes = ()
    if not isinstance(error, DomainError) and _transaction_broken():
        return  # the caller's transaction is aborted; nothing more can be written in it
    log_activity(
        actor=actor,
        operation=operation,
        query=query if isinstance(query, str) else "",
        scopes=[s for s in scopes if isinstance(s, str)],
        options=options,
        latency_ms=elapsed_ms(started),
        outcome=ActivityOutcome.ERROR,
        error_code=error.code if isinstance(error, DomainError) else "internal",
    )


def logs_remember(function: Callable[..., list]) -> Callable[..., list]:
    """Decorate the batch remember service: one activity row per call, written after it."""

    @functools.wraps(function)
    def wrapper(*, actor: Actor, requests: list, **kwargs: Any) -> list:
        started = time.perf_counter()
        scopes = sorted({r.scope for r in requests if isinstance(r.scope, str)})
        try:
            items = function(actor=actor, requests=requests, **kwargs)
        except Exception as exc:
            log_failure(
                actor=actor,
                operation=ActivityOperation.REMEMBER,
                error=exc,
                started=started,
                scopes=scopes,
            )
            raise
        results, written_to = [], set(scopes)
        for item in items:
            if item.result is not None:
                memory = item.result.memory
                written_to.add(memory.scope.public_id)
                results.append({"id": memory.public_id, "deduplicated": item.result.deduplicated})
            else:
                results.append({"error": item.error.code})
        ok = any(item.result is not None for item in items)
        errors = sorted({item.error.code for item in items if item.error is not None})
        log_activity(
            actor=actor,
            operation=ActivityOperation.REMEMBER,
            scopes=sorted(written_to),
            results=results,
            latency_ms=elapsed_ms(started),
            outcome=ActivityOutcome.HIT if ok else ActivityOutcome.ERROR,
            error_code=errors[0] if errors and not ok else "",
        )
        return items

    return wrapper


@dataclass(frozen=True)
class ActivityFilters:
    operation: str | None = None
    surface: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def activity_list(
    *, actor: Actor, filters: ActivityFilters, cursor: str | None = None, limit: int = 50
) -> tuple[list[ActivityLog], str | None]:
    """The actor's own rows, newest first; `cursor` is the last id of the previous page."""
    rows: QuerySet[ActivityLog] = ActivityLog.objects.filter(user=actor.user)
    if filters.operation:
        rows = rows.filter(operation=filters.operation)
    if filters.surface:
        rows = rows.filter(surface=filters.surface)
    if filters.outcome:
        rows = rows.filter(outcome=filters.outcome)
    if filters.since:
        rows = rows.filter(created_at__gte=filters.since)
    if filters.until:
        rows = rows.filter(created_at__lt=filters.until)
    if cursor:
        rows = rows.filter(public_id__lt=cursor)
    page = list(rows.select_related("token").order_by("-public_id")[: limit + 1])
    next_cursor = page[limit - 1].public_id if len(page) > limit else None
    return page[:limit], next_cursor


def activity_prune(*, now: datetime | None = None) -> int:
    """Delete rows older than the retention setting; returns how many went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.ACTIVITY_RETENTION_DAYS)
    deleted, _ = ActivityLog.objects.filter(created_at__lt=cutoff).delete()
    return deleted
