"""A read sent beside the request's transaction: on another connection to the primary, in a
helper thread, while the request's own connection runs its next statement. Two backends then
work on two cores at once, where one message made them run one after the other.

Only for a read that must not see the transaction's own writes anyway, and only while the
transaction is the caller's own (`alone`): inside a caller's transaction (an import, a test's)
the other connection would not see what that transaction wrote before, so the read runs on the
request's connection as before.

Each helper thread keeps its connection (autocommit, prepared statements kept as on any other,
`zeromemory.core.prepared`); one that fails is closed, so the next read opens another, and the
caller runs the read on its own connection instead (`Beside.rows` raises). `close_all` closes
them (a test run's end, before its database is dropped).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from zeromemory.core import prepared

logger = logging.getLogger(__name__)
_opened: set[BaseDatabaseWrapper] = set()
_lock = threading.Lock()


@cache
def _pool() -> ThreadPoolExecutor:
    """One thread per request thread (ZM_WEB_THREADS), so a read never queues behind another
    request's."""
    return ThreadPoolExecutor(max_workers=settings.WEB_THREADS, thread_name_prefix="beside")


def _forget_after_fork() -> None:
    """A forked child has none of the parent's threads, and must not close its connections."""
    _pool.cache_clear()
    _opened.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def alone(connection: BaseDatabaseWrapper) -> bool:
    """Whether the connection's transaction is one atomic block's, the caller's own: what it
    wrote before that block began is committed, so another connection sees it too."""
    return connection.alias == DEFAULT_DB_ALIAS and len(connection.atomic_blocks) == 1


class Beside:
    """A read sent on the helper thread's connection; `rows` waits for its answer."""

    def __init__(self, sql: str, params: Sequence[Any], *, generic: bool) -> None:
        self._future: Future[list[tuple]] = _pool().submit(_read, sql, params, generic)

    def rows(self) -> list[tuple]:
        """The read's rows; raises the DatabaseError it met (the caller reads on its own)."""
        return self._future.result()


def _read(sql: str, params: Sequence[Any], generic: bool) -> list[tuple]:
    database = connections[DEFAULT_DB_ALIAS]  # this helper thread's own
    with _lock:
        if database not in _opened:
            database.inc_thread_sharing()  # so that `close_all` may close it from any thread
            _opened.add(database)
    try:
        with database.cursor() as cursor:
            prepared.execute(cursor, sql, params, generic=generic)
            return cursor.fetchall()
    except DatabaseError as error:
        logger.warning("a read beside the transaction failed, run on its connection: %s", error)
        database.close()
        raise


def close_all() -> None:
    """Close the helper threads' connections."""
    with _lock:
        for database in _opened:
            database.close()
        _opened.clear()
