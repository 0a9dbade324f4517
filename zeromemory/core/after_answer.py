"""Work a request leaves until its answer is on its way: making the activity row of a read or a
write (which its own module then inserts with the process's next rows).

The serving bridge (`zeromemory.core.wsgi_bridge`) collects, around each request it runs, the
work the request defers (`defer`); once the whole answer is handed to the event loop, the same
thread runs it, before it closes the response (Django's request_finished) and takes another
request. The caller has its answer about a millisecond sooner; the work is done as before, only
later. Anywhere else (Django's test client, another WSGI server, a task, the MCP tools on the
event loop, a streaming answer's pieces) nothing is collected and the work runs at once, where
it was asked for.

What that costs:

- a fault between the answer and the work (the process killed, the database gone) loses the
  deferred work of that one request (an activity row: never a memory);
- a request served meanwhile by another thread could run before the work is done: a reader
  that must see it (the activity a caller's next call reads: mark_used, the activity list, the
  session receipt) calls `settled()`, which waits for the work this process deferred before it
  (a keep-alive connection stays with its process). A new connection served by another process
  within that millisecond could still miss it.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from contextvars import ContextVar

logger = logging.getLogger(__name__)

Work = Callable[[], None]

_collected: ContextVar[list[tuple[int, Work]] | None] = ContextVar("zm_after_answer", default=None)
_tickets = itertools.count(1)
_outstanding: set[int] = set()
_changed = threading.Condition()
# How long a reader waits at most for the work deferred before it (a stuck database call must
# not hold the reader forever: it then reads what is there, as if it had come sooner).
SETTLE_SECONDS = 2.0


def defer(work: Work) -> None:
    """Run `work` after this request's answer is handed on, or now outside the bridge."""
    collected = _collected.get()
    if collected is None:
        work()
        return
    with _changed:
        ticket = next(_tickets)
        _outstanding.add(ticket)
    collected.append((ticket, work))


def collecting() -> bool:
    """Whether work deferred now waits for the answer (this request runs in the bridge)."""
    return _collected.get() is not None


def collect() -> list[tuple[int, Work]]:
    """Start collecting this request's deferred work (the bridge, in the request's context)."""
    collected: list[tuple[int, Work]] = []
    _collected.set(collected)
    return collected


def run(collected: list[tuple[int, Work]]) -> None:
    """Run what was collected, in order; a failing piece is logged and the rest still run."""
    _collected.set(None)
    for ticket, work in collected:
        try:
            work()
        except Exception:
            logger.exception("work deferred after the answer failed")
        finally:
            with _changed:
                _outstanding.discard(ticket)
                _changed.notify_all()
    collected.clear()


def settled(timeout: float = SETTLE_SECONDS) -> bool:
    """Wait until the work this process deferred before now is done (at most `timeout`);
    whether it is."""
    with _changed:
        if not _outstanding:
            return True
        earlier = set(_outstanding)
        return _changed.wait_for(lambda: not (earlier & _outstanding), timeout=timeout)
