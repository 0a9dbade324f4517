"""The activity log: one row per recall, build_context, briefing and remember.

Writing a row is one INSERT, the only write on the read path. The memories an answer handed out
are listed on the row (`pending_recalls`); `fold_recall_counts`, scheduled every minute, adds them
to the memories' `recall_count` in one statement per batch. Bumping the counts inline cost more
than the search itself at 100,000 memories (ten random rows, some updates not HOT, each then
inserted into every index of the table, HNSW included); the briefing that reads the counts can
live with a minute of delay.

A failing log write is logged and swallowed: the answer the caller already has stays valid.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Q, QuerySet
from django.db.models.sql import InsertQuery
from django.utils import timezone
from psycopg.pq import TransactionStatus

from memories.activity import batched as activity_batched
from memories.models import ActivityLog, ActivityOutcome, Memory
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError
from zeromemory.core.metrics import observe_operation
from zeromemory.core.outage import unavailable
from zeromemory.core.paging import Page, cursor_page
from zeromemory.core.secrets import redact_secrets

logger = logging.getLogger(__name__)


def elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


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
    tokens: int = 0,
    searched_scopes: Iterable[int] = (),
    steps: dict[str, Any] | None = None,
    batched: bool = False,
) -> None:
    """Append one activity row; `recalled_ids` (memory pks) are counted as recalled later;
    `searched_scopes` are the ids of the scopes a read searched (the access module's answer).
    `batched` (a call answered already): outside a transaction the row goes in with the next
    rows of this process (`memories.activity.batched`)."""
    if outcome is None:
        outcome = ActivityOutcome.HIT if results else ActivityOutcome.EMPTY
    observe_operation(operation=operation, outcome=outcome, seconds=latency_ms / 1000)
    row = ActivityLog(
        surface=actor.surface,
        user=actor.user,
        token=actor.token,
        client_name=(actor.client_name or "")[:120],
        # A conversation id is the caller's to choose: a secret pasted into it is not kept.
        conversation_id=redact_secrets(actor.conversation_id)[0][:200]
        if actor.conversation_id
        else "",
        tokens=tokens,
        operation=operation,
        scopes=list(scopes),
        searched_scopes=sorted({int(pk) for pk in searched_scopes}),
        query=query,
        options=options or {},
        results=list(results),
        steps=steps or {},
        latency_ms=latency_ms,
        outcome=outcome,
        error_code=error_code[:32],
        pending_recalls=sorted(set(recalled_ids)),
    )
    try:
        # Inside a caller's transaction a savepoint keeps a failed insert from poisoning it.
        # Outside one the row commits without waiting for the WAL to reach the disk: a crash of
        # the database server may lose its last fraction of a second of activity rows (never a
        # memory), and no request waits for a disk flush (milliseconds at the tail here).
        if connection.in_atomic_block:
            with transaction.atomic():
                row.save(force_insert=True)
        elif batched:
            activity_batched.add(row)
        else:
            insert_unflushed([row])
    except DatabaseError as exc:
        if unavailable(exc) is None:  # an outage logs its own single line
            logger.exception("could not write the activity row for %s", operation)


# The INSERT's text of one row by connection alias, compiled by the ORM on the first row: its
# columns and placeholders are the same for every row (no value is an expression), and compiling
# it again on each request cost about as much as its round trip.
_INSERT_SQL: dict[str, str] = {}


def insert_unflushed(rows: list[ActivityLog]) -> None:
    """The rows' INSERT (one statement) after `SET LOCAL synchronous_commit = off`, in one
    message: PostgreSQL runs a multi-statement message as one implicit transaction, so the
    setting holds for the insert and its commit only, and the rows cost one round trip instead
    of four (BEGIN, the setting, the insert, COMMIT). The INSERT is the one `save()` or
    `bulk_create` would send, its values prepared as the ORM's compiler prepares them."""
    meta = ActivityLog._meta
    fields = [f for f in meta.local_concrete_fields if not f.generated and f is not meta.auto_field]
    sql = _INSERT_SQL.get(connection.alias) if len(rows) == 1 else None
    if sql is None:
        query = InsertQuery(ActivityLog)
        query.insert_values(fields, rows)
        [(sql, params)] = query.get_compiler(connection=connection).as_sql()
        if len(rows) == 1:
            _INSERT_SQL[connection.alias] = sql
    else:
        params = [
            field.get_db_prep_save(field.pre_save(row, add=True), connection=connection)
            for row in rows
            for field in fields
        ]
    # Inside a caller's transaction (a reader flushing the pending rows) the rows are part of it,
    # and its commit keeps waiting for the WAL's flush: the setting would hold for all of it.
    unflushed = "" if connection.in_atomic_block else "SET LOCAL synchronous_commit = off; "
    with connection.cursor() as cursor:
        cursor.execute(unflushed + sql, params)


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
    """Record a refused or failed call (bad input, a foreign scope, a server error). A query is
    refused when it holds a secret, so only here can one arrive: the row keeps it redacted."""
    if not isinstance(scopes, list | tuple):
        scopes = ()
    if not isinstance(error, DomainError) and _transaction_broken():
        return  # the caller's transaction is aborted; nothing more can be written in it
    log_activity(
        actor=actor,
        operation=operation,
        query=redact_secrets(query)[0] if isinstance(query, str) else "",
        scopes=[s for s in scopes if isinstance(s, str)],
        options=options,
        latency_ms=elapsed_ms(started),
        outcome=ActivityOutcome.ERROR,
        error_code=error.code if isinstance(error, DomainError) else "internal",
    )


READ_OPERATIONS = ("recall", "build_context", "briefing")

# The memories among `ids` that a read of this user, through this credential (token or none),
# handed out in this conversation: what `mark_used` may count.
_SERVED = """
SELECT DISTINCT e.item ->> 'id'
FROM memories_activitylog a CROSS JOIN LATERAL jsonb_array_elements(a.results) AS e(item)
WHERE a.user_id = %(user)s AND a.token_id IS NOT DISTINCT FROM %(token)s
  AND a.conversation_id = ANY(%(conversations)s)
  AND a.operation = ANY(%(reads)s) AND a.outcome <> 'error'
  AND jsonb_typeof(a.results) = 'array'
  AND e.item ->> 'id' = ANY(%(ids)s)
"""

# The same when no conversation is named: among this credential's most recent reads without one
# (the user's newest rows first, through `activity_user_recent`), never all of them.
_SERVED_RECENTLY = """
SELECT DISTINCT e.item ->> 'id'
FROM (
  SELECT a.results FROM memories_activitylog a
  WHERE a.user_id = %(user)s AND a.token_id IS NOT DISTINCT FROM %(token)s
    AND a.conversation_id = '' AND a.operation = ANY(%(reads)s) AND a.outcome <> 'error'
    AND jsonb_typeof(a.results) = 'array'
  ORDER BY a.public_id DESC LIMIT %(recent)s
) a CROSS JOIN LATERAL jsonb_array_elements(a.results) AS e(item)
WHERE e.item ->> 'id' = ANY(%(ids)s)
"""
# How many reads without a conversation id a `mark_used` without one looks back on.
RECENT_READS = 100


def served_in_conversation(
    *, actor: Actor, conversations: Sequence[str], public_ids: Sequence[str]
) -> set[str]:
    """Which of these memory ids a recall, build_context or briefing answered to this actor
    (the same user through the same credential) in one of these conversation ids, or, when none
    is named, in one of its `RECENT_READS` latest reads without a conversation id."""
    if not public_ids:
        return set()
    activity_batched.settled()  # the rows of reads this process answered just before
    named = [c for c in dict.fromkeys(conversations) if c]
    params = {
        "user": actor.user.pk,
        "token": actor.token.pk if actor.token is not None else None,
        "conversations": named,
        "reads": list(READ_OPERATIONS),
        "ids": list(dict.fromkeys(public_ids)),
        "recent": RECENT_READS,
    }
    with connection.cursor() as cursor:
        cursor.execute(_SERVED if named else _SERVED_RECENTLY, params)
        return {row[0] for row in cursor.fetchall()}


@dataclass(frozen=True)
class ActivityFilters:
    operation: str | None = None
    surface: str | None = None
    outcome: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def activity_list(
    *, actor: Actor, filters: ActivityFilters, page: Page
) -> tuple[list[ActivityLog], str | None]:
    """The actor's own rows, newest first, one page; returns (rows, next cursor).

    A row shows only what the actor may read now: rows that named a scope it cannot read (one
    it left or was removed from, or outside a token's restriction) are left out, and the result
    lists keep only memories it can still read. A token restricted to scopes also skips rows over
    "every readable scope" (an empty list) that it did not write itself.
    """
    activity_batched.settled()  # the rows of calls this process answered just before
    readable = list(access.readable_scopes(actor).values_list("public_id", flat=True))
    rows: QuerySet[ActivityLog] = ActivityLog.objects.filter(
        user=actor.user, scopes__contained_by=readable
    )
    if actor.scope_restricted:
        rows = rows.filter(Q(token=actor.token) | ~Q(scopes=[]))
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
    found, next_cursor = cursor_page(rows.select_related("token"), page)
    _keep_readable_results(found, readable)
    return found, next_cursor


def _memory_id(item: object) -> str | None:
    """The memory a result entry names (entries may name other things, such as chunks)."""
    if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"].startswith("mem_"):
        return item["id"]
    return None


def _keep_readable_results(rows: list[ActivityLog], readable: list[str]) -> None:
    """Drop result entries naming memories outside the readable scopes (in memory, not stored)."""
    named = {_memory_id(item) for row in rows for item in row.results}
    named.discard(None)
    if not named:
        return
    visible = set(
        Memory.objects.filter(public_id__in=named, scope__public_id__in=readable).values_list(
            "public_id", flat=True
        )
    )
    for row in rows:
        row.results = [
            item for item in row.results if _memory_id(item) is None or item["id"] in visible
        ]


def activity_prune(*, now: datetime | None = None) -> int:
    """Delete rows older than the retention setting (once their recalls are counted)."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.ACTIVITY_RETENTION_DAYS)
    deleted, _ = ActivityLog.objects.filter(created_at__lt=cutoff, pending_recalls=[]).delete()
    return deleted


FOLD_BATCH = 5000

# One statement: claim a batch of rows (SKIP LOCKED, so two folds never count a row twice), clear
# their lists, and add the counts, locking the memories in id order so two folds cannot deadlock.
_FOLD = """
WITH batch AS MATERIALIZED (
    SELECT id, pending_recalls, created_at FROM memories_activitylog
    WHERE pending_recalls <> '{}'
    ORDER BY id
    LIMIT %s
    FOR UPDATE SKIP LOCKED
),
cleared AS (
    UPDATE memories_activitylog a SET pending_recalls = '{}' FROM batch b WHERE a.id = b.id
),
counts AS MATERIALIZED (
    SELECT memory_id, count(*) AS times, max(batch.created_at) AS last_at
    FROM batch CROSS JOIN unnest(batch.pending_recalls) AS memory_id
    GROUP BY memory_id
),
locked AS MATERIALIZED (
    SELECT m.id FROM memories_memory m WHERE m.id IN (SELECT memory_id FROM counts)
    ORDER BY m.id FOR UPDATE
),
bumped AS (
    UPDATE memories_memory m SET recall_count = m.recall_count + c.times,
        last_recalled_at = greatest(m.last_recalled_at, c.last_at)
    FROM counts c WHERE m.id = c.memory_id AND m.id IN (SELECT id FROM locked)
)
SELECT count(*) FROM batch
"""


def fold_recall_counts(*, batch: int = FOLD_BATCH) -> int:
    """Add pending recalls to the memories' recall_count (and move their last_recalled_at, which
    ageing reads); returns how many rows it folded."""
    folded = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_FOLD, [batch])
            rows = cursor.fetchone()[0]
        folded += rows
        if rows < batch:
            return folded
