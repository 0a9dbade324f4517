"""Requests first, by stopping the background: while a request someone waits on is in flight in
one of `serve`'s web processes, `serve` stops its bulk processes and its worker, and continues
them when none is, within bounds.

Niceness and autogroups only order what is runnable, and giving way between the steps of bulk
work (zeromemory.core.foreground) leaves each step running to its end: on 2 cores, one
CPU-bound neighbour at the worker's niceness made a single remember a third slower, and a pass
of the model runs for milliseconds between the points where it can give way. A stopped process
takes no CPU at all. So:

- every web process tells the supervisor how many interactive requests it has in flight, each
  time that number changes (a datagram of its pid and the number, on a socket it inherits:
  `Board.add` in zeromemory.core.foreground);
- the supervisor sends SIGSTOP to the process group of each background child (the bulk
  processes, the worker with everything it started) when the first such request starts, and
  SIGCONT when the last one ends;
- within two bounds, so that the background always goes on: one stop lasts ZM_FOREGROUND_STOP_MS
  at most (a request waiting for a row that a stopped process holds waits that long at most),
  and while requests keep coming the background still runs ZM_BACKGROUND_SHARE percent of the
  time (a stop spends an allowance that running earns back).

Everything runs in the supervisor's one thread, between its checks of the children; before it
stops the children (SIGTERM would wait in a stopped process) it continues them.
"""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Iterable

from zeromemory.core.foreground import MESSAGE
from zeromemory.supervisor import kill_group

# The background is never stopped for less than this: a stop costs a signal to every thread of
# every background process, and again to continue it.
SHORTEST_STOP_SECONDS = 0.005


def _stopped_already(pgid: int) -> bool:
    """Whether the group's leader is stopped by someone else (an operator's `kill -STOP`, a
    bench pausing the worker): that group is left as it is, stopped, and never continued."""
    try:
        with open(f"/proc/{pgid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


class Conductor:
    """The supervisor's side: the web processes' counts, and the background's groups stopped or
    running. `longest` seconds per stop at most (0: never stops), `share` of the time (0 to 1]
    left to the background while requests keep coming."""

    def __init__(self, *, longest: float, share: float) -> None:
        self.receiver, self.sender = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.receiver.setblocking(False)
        # Seconds of stop one second of running earns.
        self.earns = (1 - share) / share if 0 < share < 1 else 0.0
        self.longest = longest if self.earns > 0 else 0.0  # a share of all: never stopped
        self.shortest = min(SHORTEST_STOP_SECONDS, self.longest)
        self.allowance = self.longest
        self.in_flight: dict[int, int] = {}
        self.stopped: list[int] = []  # the groups stopped, while stopped
        self.last = time.monotonic()

    def fileno(self) -> int:
        return self.receiver.fileno()

    @property
    def sender_fd(self) -> int:
        """The descriptor web processes inherit (ZM_CONDUCTOR_FD) to tell their numbers on."""
        return self.sender.fileno()

    def forget(self, pid: int) -> None:
        """A web process exited: what it had in flight is gone with it."""
        self.in_flight.pop(pid, None)

    def step(self, groups: Iterable[int]) -> float:
        """Read the messages waiting, stop or continue `groups` (the background children's
        process groups now); returns the seconds until it must step again at the latest."""
        while True:
            try:
                data = self.receiver.recv(MESSAGE.size)
            except BlockingIOError:
                break
            if len(data) != MESSAGE.size:
                continue
            pid, count = MESSAGE.unpack(data)
            if count > 0:
                self.in_flight[pid] = count
            else:
                self.in_flight.pop(pid, None)
        now = time.monotonic()
        elapsed, self.last = now - self.last, now
        if self.stopped:
            self.allowance -= elapsed
        else:
            self.allowance = min(self.longest, self.allowance + elapsed * self.earns)
        wanted = bool(self.in_flight)
        if self.stopped and (not wanted or self.allowance <= 0):
            self.release()
        elif not self.stopped and wanted and self.longest and self.allowance >= self.shortest:
            self.stopped = [pgid for pgid in groups if not _stopped_already(pgid)]
            for pgid in self.stopped:
                kill_group(pgid, signal.SIGSTOP)
        if self.stopped:
            return max(0.0, self.allowance)
        if wanted and self.longest and self.allowance < self.shortest:  # until it may stop again
            return (self.shortest - self.allowance) / self.earns
        return float("inf")

    def release(self) -> None:
        """Continue whatever is stopped."""
        stopped, self.stopped = self.stopped, []
        for pgid in stopped:
            kill_group(pgid, signal.SIGCONT)

    def close(self) -> None:
        self.release()
        self.receiver.close()
        self.sender.close()
