"""Reads to a replica (ZM_DATABASE_REPLICA_URLS), writes and everything else to the primary.

A request marked as a read (`ReadRoutingMiddleware`: recall, context, briefing, and GET and HEAD
of the API and the dashboard) sends the ORM reads of tenant data (the `memories` app, scopes and
memberships) and recall's own statements (which ask `router.db_for_read`) to a replica. Sign-in,
tokens, sessions, the rate limit, the activity log, every write, migrations and every task use the
primary. A replica is skipped while it lags past ZM_REPLICA_MAX_LAG_SECONDS or cannot be reached
(checked at most once a second per process, retried five seconds after a failure).

Read-your-writes: a write by a user (any other request of theirs that succeeded) stores its time
in the primary (`zm_last_write`, beside the rate-limit rows); for ZM_READ_YOUR_WRITES_SECONDS
after it, that user's reads go to the primary on every web host.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

logger = logging.getLogger("zeromemory.routing")

REPLICA_PREFIX = "replica"
CHECK_SECONDS = 1.0  # how long a replica's measured lag is trusted
RETRY_SECONDS = 5.0  # how long an unreachable replica is left alone
# Models read from a replica on a read request; the rest of the tenancy app (tokens, OAuth) and
# Django's own (users, sessions) stay on the primary: who the caller is must never lag.
ROUTED_MODELS = {("scopes", "scope"), ("scopes", "membership")}
ROUTED_APPS = {"memories"}

# Seconds the replica is behind: 0 while it has replayed everything it received from a primary
# it still streams from; otherwise the age of the last transaction it replayed.
LAG_SQL = """
SELECT CASE
  WHEN NOT pg_is_in_recovery() THEN 0
  WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
       AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN 0
  ELSE COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 1e9)
END
"""
NOTE_WRITE_SQL = """
INSERT INTO zm_last_write (user_id, written_at) VALUES (%s, clock_timestamp())
ON CONFLICT (user_id) DO UPDATE SET written_at = EXCLUDED.written_at
"""
RECENT_WRITE_SQL = """
SELECT 1 FROM zm_last_write
WHERE user_id = %s AND written_at > clock_timestamp() - make_interval(secs => %s)
"""


def replica_aliases() -> list[str]:
    return [alias for alias in settings.DATABASES if alias.startswith(REPLICA_PREFIX)]


@dataclass
class _Health:
    usable: bool
    until: float  # monotonic time this verdict holds until


_health: dict[str, _Health] = {}
_health_lock = threading.Lock()


def mark_down(alias: str, reason: BaseException | str) -> None:
    """Leave a replica alone for RETRY_SECONDS; reads go to the primary meanwhile."""
    with _health_lock:
        was_usable = _health.get(alias, _Health(True, 0)).usable
        _health[alias] = _Health(False, time.monotonic() + RETRY_SECONDS)
    if was_usable:
        first = str(reason).strip().splitlines()[:1] or [type(reason).__name__]
        logger.warning("replica %s not used, reads go to the primary: %s", alias, first[0][:300])


def _measure(alias: str) -> None:
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(LAG_SQL)
            lag = float(cursor.fetchone()[0])
    except DatabaseError as exc:
        with contextlib.suppress(DatabaseError):
            connections[alias].close()
        mark_down(alias, exc)
        return
    if lag > settings.REPLICA_MAX_LAG_SECONDS:
        mark_down(alias, f"{lag:.1f} s behind (ZM_REPLICA_MAX_LAG_SECONDS)")
        return
    with _health_lock:
        if not _health.get(alias, _Health(True, 0)).usable:
            logger.warning("replica %s in use again (%.1f s behind)", alias, lag)
        _health[alias] = _Health(True, time.monotonic() + CHECK_SECONDS)


def usable(alias: str) -> bool:
    health = _health.get(alias)
    if health is None or health.until <= time.monotonic():
        _measure(alias)
        health = _health[alias]
    return health.usable


def recently_wrote(user_id: int) -> bool:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(RECENT_WRITE_SQL, [user_id, settings.READ_YOUR_WRITES_SECONDS])
        return cursor.fetchone() is not None


def note_write(user_id: int) -> None:
    """Send this user's reads to the primary for the next ZM_READ_YOUR_WRITES_SECONDS."""
    if not replica_aliases():
        return
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(NOTE_WRITE_SQL, [user_id])


@dataclass
class Routing:
    """One request's (or one MCP call's) routing: who asks, whether it only reads."""

    user: Callable[[], Any]
    reads: bool
    alias: str | None = None  # decided at its first routed read, then kept
    used: set[str] = field(default_factory=set)
    wrote: bool = False  # an ORM write happened (MCP calls note the user's write from it)

    def read_alias(self) -> str:
        if self.alias is None:
            self.alias = self._choose()
        if self.alias != DEFAULT_DB_ALIAS:
            self.used.add(self.alias)
        return self.alias

    def _choose(self) -> str:
        user = self.user()
        if user is None or not getattr(user, "is_authenticated", False):
            return DEFAULT_DB_ALIAS
        if recently_wrote(user.pk):
            return DEFAULT_DB_ALIAS
        candidates = [alias for alias in replica_aliases() if usable(alias)]
        return random.choice(candidates) if candidates else DEFAULT_DB_ALIAS


_current: ContextVar[Routing | None] = ContextVar("zeromemory_routing", default=None)


@contextlib.contextmanager
def routed(routing: Routing) -> Iterator[Routing]:
    token = _current.set(routing)
    try:
        yield routing
    finally:
        _current.reset(token)


@contextlib.contextmanager
def noting_writes(user: Any) -> Iterator[None]:
    """Work outside a Django request (an MCP call) on the primary; a write it makes is noted."""
    if not replica_aliases():
        yield
        return
    with routed(Routing(user=lambda: user, reads=False)) as state:
        yield
    if state.wrote:
        note_write(user.pk)


def replicas_in_use() -> set[str]:
    """The replicas this request has read from (an error on one is that replica's outage)."""
    routing = _current.get()
    return set(routing.used) if routing is not None else set()


def _routed_model(model: type | None) -> bool:
    if model is None:
        return False
    meta = model._meta
    return meta.app_label in ROUTED_APPS or (meta.app_label, meta.model_name) in ROUTED_MODELS


class ReplicaRouter:
    """Django's database router for ZM_DATABASE_REPLICA_URLS (settings.DATABASE_ROUTERS)."""

    def db_for_read(self, model: type | None, **hints: Any) -> str:
        routing = _current.get()
        if routing is None or not routing.reads or not _routed_model(model):
            return DEFAULT_DB_ALIAS
        return routing.read_alias()

    def db_for_write(self, model: type | None, **hints: Any) -> str:
        routing = _current.get()
        if routing is not None:
            routing.wrote = True
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database, seen through several connections

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
