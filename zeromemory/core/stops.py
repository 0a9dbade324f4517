"""The background's stop, one record shared by `serve`'s supervisor and its web processes
(zeromemory.conductor has the why).

A web process stops the background itself, on the thread of the request that starts its first
one in flight: waking the supervisor to do it took 0.4 ms at the median and up to 18 ms on a
busy machine. The supervisor continues it (when no web process has a request in flight, or one
stop has lasted its bound) and stops it again for requests still in flight once the background
has had its share. Both change the record only under its lock (the record's file locked with
lockf, and a thread lock inside each process), so it always says what is stopped:

- the background's process groups, as the supervisor last wrote them;
- whether they are stopped, and which of them (a group whose leader someone else stopped, an
  operator's `kill -STOP` or a bench pausing the worker, is neither stopped nor continued);
- the allowance: how long a stop may still last, brought up to date at each change (a stop
  spends it, running earns it back at `earns` per second, up to `longest`).

The record lives in a memfd the supervisor creates; the web processes inherit its descriptor
(ZM_STOPS_FD) and each tells the supervisor its number of requests in flight on a datagram socket
(ZM_CONDUCTOR_FD), which wakes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# pid of a web process, interactive requests it has in flight
MESSAGE = struct.Struct("=qq")
GROUPS = 16
# stopped (a mask of the groups), allowance and when it was brought up to date (ns, monotonic),
# longest stop and earning rate (ns of stop per second of running), how many groups, the groups
RECORD = struct.Struct("=qqqqqq" + "q" * GROUPS)
# The background is never stopped for less than this: a stop costs a signal to every thread of
# every background process, and again to continue it.
SHORTEST_STOP_NS = 5_000_000


def signal_group(pgid: int, sig: int) -> bool:
    """Signal every process in a group; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):  # gone, or no longer a process of ours
        return False
    return True


def stopped_by_someone_else(pgid: int) -> bool:
    """Whether a group's leader is stopped while the record says it is not stopped by us."""
    try:
        with open(f"/proc/{pgid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


@dataclass
class Record:
    stopped: int
    allowance: int
    changed: int
    longest: int
    earns: int
    groups: list[int]

    def shortest(self) -> int:
        return min(SHORTEST_STOP_NS, self.longest)

    def due(self, *, wanted: bool) -> float:
        """Seconds until the supervisor must look again: the stop's end, or the allowance
        enough for another while requests are still in flight; infinity when only a message
        can change anything."""
        if self.stopped:
            return max(0, self.allowance) / 10**9
        if wanted and self.longest and self.groups and self.allowance < self.shortest():
            return (self.shortest() - self.allowance) / self.earns
        return float("inf")

    def brought_to(self, now: int) -> None:
        """The allowance at `now`: spent while stopped, earned back while running."""
        elapsed = max(0, now - self.changed)
        if self.stopped:
            self.allowance -= elapsed
        else:
            self.allowance = min(self.longest, self.allowance + elapsed * self.earns // 10**9)
        self.changed = now


class Stops:
    """The shared record over descriptor `fd`."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.map = mmap.mmap(fd, RECORD.size)
        self.lock = threading.Lock()

    @classmethod
    def create(cls, *, longest: float, share: float) -> Stops:
        """A new record (the supervisor's): stops of `longest` seconds at most, leaving the
        background `share` (0 to 1] of the time; a share of all, or no longest: never stops."""
        fd = os.memfd_create("zero-memory-stops")
        os.ftruncate(fd, RECORD.size)
        stops = cls(fd)
        earns = int((1 - share) / share * 10**9) if 0 < share < 1 else 0
        longest_ns = int(longest * 10**9) if earns else 0
        stops._write(Record(0, longest_ns, time.monotonic_ns(), longest_ns, earns, []))
        return stops

    def _read(self) -> Record:
        values = RECORD.unpack_from(self.map)
        count = values[5]
        return Record(*values[:5], groups=list(values[6 : 6 + count]))

    def _write(self, record: Record) -> None:
        groups = record.groups[:GROUPS]
        padded = groups + [0] * (GROUPS - len(groups))
        RECORD.pack_into(
            self.map,
            0,
            record.stopped,
            record.allowance,
            record.changed,
            record.longest,
            record.earns,
            len(groups),
            *padded,
        )

    @contextmanager
    def held(self) -> Iterator[Record]:
        """The record, brought up to date, under the lock; written back after the block."""
        with self.lock:
            fcntl.lockf(self.fd, fcntl.LOCK_EX)
            try:
                record = self._read()
                record.brought_to(time.monotonic_ns())
                yield record
                self._write(record)
            finally:
                fcntl.lockf(self.fd, fcntl.LOCK_UN)

    @staticmethod
    def stop(record: Record) -> None:
        """Under the lock: the background stopped, if the allowance allows and it is running."""
        if record.stopped or not record.longest or record.allowance < record.shortest():
            return
        for index, pgid in enumerate(record.groups):
            if not stopped_by_someone_else(pgid) and signal_group(pgid, signal.SIGSTOP):
                record.stopped |= 1 << index

    @staticmethod
    def cont(record: Record) -> None:
        """Under the lock: what the record stopped continued."""
        for index, pgid in enumerate(record.groups):
            if record.stopped & (1 << index):
                signal_group(pgid, signal.SIGCONT)
        record.stopped = 0

    def stop_if_allowed(self) -> None:
        """A web process's first request in flight: stop the background now, if allowed."""
        with self.held() as record:
            self.stop(record)

    def close(self) -> None:
        self.map.close()
        os.close(self.fd)


class Link:
    """A web process's side: its number told, and the background stopped at its first request."""

    def __init__(self, *, conductor_fd: int, stops_fd: int) -> None:
        self.sender = socket.socket(fileno=os.dup(conductor_fd))
        self.sender.setblocking(False)
        self.stops = Stops(os.dup(stops_fd))

    def tell(self, in_flight: int, *, first: bool) -> None:
        """Never blocks and never fails a request: a message lost only lets the background run.
        The message goes first, so that the supervisor, which reads every message waiting under
        the lock before it decides, never takes a stop made here for one without a request."""
        with contextlib.suppress(OSError):
            self.sender.send(MESSAGE.pack(os.getpid(), in_flight))
        if first:
            with contextlib.suppress(OSError, ValueError):
                self.stops.stop_if_allowed()
