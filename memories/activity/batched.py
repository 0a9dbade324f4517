"""The activity rows of answered calls, written together by one thread of the process.

A call served through the bridge (`zeromemory.core.after_answer`) made its row after its answer
was on its way, and inserted it at once: an INSERT of about a millisecond that, with one request
after another on a connection, ran beside the next request's pass of the model and its
statements, on the same two cores, and made it that much slower. Here the row is only added to
the process's pending rows; a writer thread inserts what is pending in one statement (without
waiting for the WAL's flush, as each row was before), once FLUSH_SECONDS have passed since the
oldest of them was added or FLUSH_ROWS are pending, after giving way to the host's requests in
flight (`zeromemory.core.foreground`, within its bounded wait).

A reader that must see the rows of the calls this process answered (`settled`: mark_used, the
activity list, the session receipt) writes what is pending itself first. A reader in another
process sees them within FLUSH_SECONDS, plus the writer's wait. The rows still pending when the
process exits are written then; a process killed outright loses them (activity rows, never a
memory), as it lost the one row it was about to write before.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from memories.models import ActivityLog
from zeromemory.core import after_answer, foreground
from zeromemory.core.outage import unavailable

logger = logging.getLogger(__name__)

FLUSH_SECONDS = 0.25
FLUSH_ROWS = 64

_pending: list[ActivityLog] = []
_oldest = 0.0  # when the oldest pending row was added (time.monotonic)
_changed = threading.Condition()
_writing = threading.Lock()  # one insert at a time, so the rows go in the order they came
_writer: threading.Thread | None = None
_connections: set = set()


def add(row: ActivityLog) -> None:
    """Write the row with the next rows of this process, soon."""
    global _oldest, _writer
    with _changed:
        if not _pending:
            _oldest = time.monotonic()
        _pending.append(row)
        if _writer is None:
            _writer = threading.Thread(target=_write_forever, name="activity-rows", daemon=True)
            _writer.start()
        _changed.notify_all()  # the writer counts from the oldest row, or has enough now


def settled() -> None:
    """The rows of the calls this process answered before now are in the database."""
    after_answer.settled()
    flush()


def flush() -> None:
    """Insert what is pending now, in this thread (on its connection, outside any transaction
    of its own)."""
    with _writing:
        _flushed()


def _flushed() -> None:
    with _changed:
        rows = list(_pending)
        _pending.clear()
    if rows:
        _inserted(rows)


def _inserted(rows: list[ActivityLog]) -> None:
    # Imported here: the log module's readers call `settled` above.
    from memories.activity.log import insert_unflushed

    for attempt in (1, 2):
        try:
            insert_unflushed(rows)
            return
        except DatabaseError as exc:
            # A connection the server closed (restarted, failed over) is opened again once.
            connections[DEFAULT_DB_ALIAS].close_if_unusable_or_obsolete()
            if unavailable(exc) is not None:  # an outage logs its own single line
                return
            if attempt == 2:
                logger.exception("could not write %d activity rows", len(rows))


def _write_forever() -> None:
    database = connections[DEFAULT_DB_ALIAS]  # this thread's own
    database.inc_thread_sharing()  # so that `close` may close it from another thread
    with _changed:
        _connections.add(database)
    while True:
        with _changed:
            while not _pending:
                _changed.wait()
            while (
                len(_pending) < FLUSH_ROWS
                and (left := _oldest + FLUSH_SECONDS - time.monotonic()) > 0
            ):
                _changed.wait(left)
        try:
            foreground.give_way(foreground.Allowance())
            flush()
        except Exception:  # the rows taken are lost; the writer goes on with the next ones
            logger.exception("the activity rows' writer failed")


def close() -> None:
    """Write what is pending and close the writer's connection (a test's end, before its
    database is flushed or dropped); the writer opens another when it next writes."""
    with _writing:
        _flushed()
        with _changed:
            for database in _connections:
                database.close()


def _forget_after_fork() -> None:
    """A forked child has none of the parent's threads, and its rows are the parent's."""
    global _writer, _changed, _writing
    _pending.clear()
    _connections.clear()
    _writer = None
    _changed = threading.Condition()
    _writing = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(flush)
