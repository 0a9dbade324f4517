"""Who runs a forward pass of the embedding model when, in one process (memories.embeddings)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager


class FairLock:
    """A lock taken in the order it was asked for: a thread that lets it go and asks again
    queues behind those already waiting."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: deque[object] = deque()
        self._held = False

    def locked(self) -> bool:
        return self._held

    def __enter__(self) -> None:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            self._cond.wait_for(lambda: not self._held and self._queue[0] is ticket)
            self._queue.popleft()
            self._held = True

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()


class Turns:
    """Forward passes of a process: one pass of a batch at a time, one pass of a few texts (a
    query, a single memory) at a time, and the two side by side. A batch runs in passes of at
    most TURN_CHARS characters, each its process's cores at work for up to a second or two on
    a CPU without wide vector units; a query asked meanwhile runs beside it rather than after
    it, so one writer's batch never holds everybody's recall behind it. Two batches still take
    turns pass by pass, so neither waits for the other's end."""

    def __init__(self) -> None:
        self._kinds = {True: FairLock(), False: FairLock()}  # short, long
        self._count = threading.Lock()
        self._running = 0

    @property
    def busy(self) -> bool:
        """Whether a pass runs now."""
        return self._running > 0

    @property
    def batch_running(self) -> bool:
        """Whether a batch's pass runs now."""
        return self._kinds[False].locked()

    @contextmanager
    def turn(self, *, short: bool) -> Iterator[bool]:
        """Runs one pass; yields whether it runs alone (then it may set the thread count)."""
        with self._kinds[short]:
            with self._count:
                self._running += 1
                alone = self._running == 1
            try:
                yield alone
            finally:
                with self._count:
                    self._running -= 1
