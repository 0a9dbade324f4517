"""Requests first, host-wide: bulk work anywhere on this host steps aside while a request that a
person or an agent waits on is in flight in any process.

Niceness puts the worker behind the web processes, but not one web process's batch behind
another's recall, nor a batch's thread behind a recall in its own process (they share the
cores and the interpreter). So:

- a request (REST, dashboard, MCP) counts as interactive while it runs (`interactive()`);
- a request that turns out to be bulk work (embedding many texts at once) steps back
  (`step_back()`): from then on it no longer counts;
- bulk work (a batch's or an import's passes of the model, the worker's tasks and slices) calls
  `give_way()` between its steps: while an interactive request is in flight anywhere on the
  host it sleeps, for at most ZM_FOREGROUND_WAIT_MS per step (an `Allowance` spreads that over
  the steps of one pass), so it always goes on, only later.

The count lives in a small file mapped into every process (ZM_FOREGROUND_FILE): one slot per
process holding its pid, how many interactive requests it has in flight and when that number
last changed. A process claims a free slot, or one whose process is gone, under an exclusive
lock of the file the first time it counts. A process killed with requests in flight leaves its
number behind: readers skip a slot whose process is gone, or whose number has not changed for
STALE_SECONDS (its pid taken by another process since). Only the processes of one host share
the file: each web host orders its own.
"""

from __future__ import annotations

import fcntl
import logging
import mmap
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

SLOTS = 128
# pid, interactive requests in flight, when that changed (CLOCK_MONOTONIC ns, the same clock in
# every process of the host)
SLOT = struct.Struct("=qqq")
TABLE = struct.Struct("=" + "qqq" * SLOTS)
STALE_SECONDS = 60
# To `serve`'s supervisor (zeromemory.conductor), from a web process each time its number
# changes: its pid, the interactive requests it has in flight.
MESSAGE = struct.Struct("=qq")
# How often a waiting step looks again: a request's end is noticed within this.
POLL_SECONDS = 0.001

logger = logging.getLogger(__name__)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


class Board:
    """The shared file of one host's slots, and this process's own slot in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._map: mmap.mmap | None = None
        self._index: int | None = None
        self._in_flight = 0
        self._unusable = False
        self._conductor: socket.socket | None = None

    def forget_slot(self) -> None:
        """After a fork: the child claims a slot of its own, with nothing in flight."""
        self._lock = threading.Lock()
        self._index = None
        self._in_flight = 0
        self._conductor = None

    def _mapped(self) -> mmap.mmap | None:
        """The file mapped, or None when it cannot be (then nothing is counted and bulk work
        never waits: a request must not fail for want of this file)."""
        if self._map is None and not self._unusable:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    # The file's blocks reserved, not only its size set: a page of a sparse
                    # file that the disk has no room for kills the process that writes it
                    # (SIGBUS); here a full disk is an OSError. Done twice, nothing changes.
                    os.posix_fallocate(fd, 0, TABLE.size)
                    self._map = mmap.mmap(fd, TABLE.size)
                finally:
                    os.close(fd)
            except OSError as error:
                self._unusable = True
                logger.warning("requests are not counted across processes: %s", error)
        return self._map

    def _claim(self) -> int | None:
        """A slot for this process: its own, a free one, or one whose process is gone."""
        table = self._mapped()
        if table is None:
            return None
        pid = os.getpid()
        with open(self.path, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            values = TABLE.unpack_from(table)
            free = None
            for index in range(SLOTS):
                owner = values[index * 3]
                if owner == pid:
                    free = index
                    break
                if free is None and (owner == 0 or not _alive(owner)):
                    free = index
            if free is not None:
                SLOT.pack_into(table, free * SLOT.size, pid, 0, time.monotonic_ns())
        return free  # None: the table is full; this process's requests go uncounted

    def add(self, change: int) -> None:
        with self._lock:
            if self._index is None:
                self._index = self._claim()
            self._in_flight = max(0, self._in_flight + change)
            if self._index is not None and self._map is not None:
                SLOT.pack_into(
                    self._map,
                    self._index * SLOT.size,
                    os.getpid(),
                    self._in_flight,
                    time.monotonic_ns(),
                )
            if settings.CONDUCTOR_FD:
                self._tell_conductor(settings.CONDUCTOR_FD)

    def _tell_conductor(self, fd: int) -> None:
        """The supervisor's side learns this process's number at once. Never blocks and never
        fails a request: a message lost only lets the background run."""
        try:
            if self._conductor is None:
                self._conductor = socket.socket(fileno=os.dup(fd))
                self._conductor.setblocking(False)
            self._conductor.send(MESSAGE.pack(os.getpid(), self._in_flight))
        except OSError:
            pass

    def in_flight(self) -> int:
        """Interactive requests in flight on this host, this process's included."""
        table = self._mapped()
        if table is None:
            return 0
        values = TABLE.unpack_from(table)
        now = time.monotonic_ns()
        stale = STALE_SECONDS * 1_000_000_000
        total = 0
        for index in range(0, len(values), 3):
            pid, count, changed = values[index : index + 3]
            if count > 0 and now - changed < stale and _alive(pid):
                total += count
        return total


_board: Board | None = None
_board_lock = threading.Lock()
_thread = threading.local()


def board() -> Board:
    """This host's board (ZM_FOREGROUND_FILE), mapped on first use."""
    global _board
    with _board_lock:
        if _board is None or _board.path != Path(settings.FOREGROUND_FILE):
            _board = Board(Path(settings.FOREGROUND_FILE))
        return _board


def _after_fork() -> None:
    if _board is not None:
        _board.forget_slot()
    _thread.__dict__.clear()


os.register_at_fork(after_in_child=_after_fork)


@contextmanager
def interactive() -> Iterator[None]:
    """The block is a request someone waits on: it counts in flight unless it steps back.
    Nested blocks of one thread count once."""
    if getattr(_thread, "depth", 0):
        _thread.depth += 1
        try:
            yield
        finally:
            _thread.depth -= 1
        return
    _thread.depth, _thread.counted = 1, True
    board().add(1)
    try:
        yield
    finally:
        if _thread.counted:
            board().add(-1)
        _thread.depth, _thread.counted = 0, False


def step_back() -> None:
    """This thread's request is bulk work from here on: it no longer counts, and gives way."""
    if getattr(_thread, "counted", False):
        _thread.counted = False
        board().add(-1)


def is_interactive() -> bool:
    """Whether this thread runs a request that counts (it never waits for others)."""
    return getattr(_thread, "counted", False)


@contextmanager
def on_behalf(*, interactive: bool) -> Iterator[None]:
    """A helper thread doing a part of a request's work (a recall's query embedding beside its
    statements): interactive when the request is, so it never waits for requests in flight,
    its own included. Not counted again: the request's thread counts it."""
    was = getattr(_thread, "counted", False)
    _thread.counted = interactive
    try:
        yield
    finally:
        _thread.counted = was


def wait_seconds() -> float:
    """How long one step of bulk work may wait at most (ZM_FOREGROUND_WAIT_MS)."""
    return settings.FOREGROUND_WAIT_MS / 1000


class Allowance:
    """What is left of one pass's wait: the steps of a pass (between the model's layers) share
    one ZM_FOREGROUND_WAIT_MS."""

    def __init__(self) -> None:
        self.seconds = wait_seconds()


def give_way(allowance: Allowance | None = None) -> float:
    """Between two steps of bulk work: sleep while an interactive request is in flight on this
    host, at most the allowance (ZM_FOREGROUND_WAIT_MS without one). A thread running an
    interactive request never waits. Returns the seconds waited."""
    if is_interactive():
        return 0.0
    limit = wait_seconds() if allowance is None else allowance.seconds
    if limit <= 0:
        return 0.0
    shared = board()
    started = time.monotonic()
    waited = 0.0
    while waited < limit and shared.in_flight():
        time.sleep(POLL_SECONDS)
        waited = time.monotonic() - started
    if allowance is not None:
        allowance.seconds -= waited
    return waited


class ForegroundMiddleware:
    """Every request through Django counts as interactive until it steps back."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        with interactive():
            return self.get_response(request)
