"""Requests first, by stopping the background: while a request someone waits on is in flight in
one of `serve`'s web processes, its bulk processes and its worker are stopped, and they are
continued when none is, within bounds.

Niceness and autogroups only order what is runnable, and giving way between the steps of bulk
work (zeromemory.core.foreground) leaves each step running to its end: on 2 cores, one
CPU-bound neighbour at the worker's niceness made a single remember a third slower, and a pass
of the model runs for milliseconds between the points where it can give way. A stopped process
takes no CPU at all. So:

- a web process whose first request starts stops the background's process groups itself
  (SIGSTOP to each group: the bulk processes, the worker with everything it started), and
  every web process tells the supervisor how many requests it has in flight each time that
  number changes (zeromemory.core.stops has the record they share and the messages);
- the supervisor continues them (SIGCONT) when no web process has a request in flight;
- within two bounds, so that the background always goes on: one stop lasts ZM_FOREGROUND_STOP_MS
  at most (a request waiting for a row that a stopped process holds waits that long at most),
  and while requests keep coming the background still runs ZM_BACKGROUND_SHARE percent of the
  time (a stop spends an allowance that running earns back; the supervisor stops the
  background again for requests still in flight once it has enough).

The supervisor steps this in its one loop, between its checks of the children; before it stops
the children (SIGTERM would wait in a stopped process) it continues them.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

from zeromemory.core.stops import MESSAGE, Stops


class Conductor:
    """The supervisor's side: the web processes' numbers and the shared record. `longest`
    seconds per stop at most (0: never stops), `share` of the time (0 to 1] left to the
    background while requests keep coming."""

    def __init__(self, *, longest: float, share: float) -> None:
        self.receiver, self.sender = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.receiver.setblocking(False)
        self.stops = Stops.create(longest=longest, share=share)
        self.in_flight: dict[int, int] = {}

    def fileno(self) -> int:
        return self.receiver.fileno()

    def environment(self) -> tuple[dict[str, str], tuple[int, ...]]:
        """What a web process inherits: its variables and descriptors."""
        fds = (self.sender.fileno(), self.stops.fd)
        return {"ZM_CONDUCTOR_FD": str(fds[0]), "ZM_STOPS_FD": str(fds[1])}, fds

    def forget(self, pid: int) -> None:
        """A web process exited: what it had in flight is gone with it."""
        self.in_flight.pop(pid, None)

    def _read_messages(self) -> None:
        while True:
            try:
                data = self.receiver.recv(MESSAGE.size)
            except BlockingIOError:
                return
            if len(data) != MESSAGE.size:
                continue
            pid, count = MESSAGE.unpack(data)
            if count > 0:
                self.in_flight[pid] = count
            else:
                self.in_flight.pop(pid, None)

    def step(self, groups: Iterable[int]) -> float:
        """Stop or continue `groups` (the background children's process groups now); returns the
        seconds until it must step again at the latest. The messages are read under the lock:
        a web process tells before it stops, so a stop found here has its message read."""
        with self.stops.held() as record:
            self._read_messages()
            wanted = bool(self.in_flight)
            if not record.stopped:
                record.groups = list(groups)
            if record.stopped and (not wanted or record.allowance <= 0):
                self.stops.cont(record)
            elif wanted:
                self.stops.stop(record)
            return record.due(wanted=wanted)

    def release(self) -> None:
        """Continue whatever is stopped."""
        with self.stops.held() as record:
            self.stops.cont(record)

    def close(self) -> None:
        self.release()
        self.receiver.close()
        self.sender.close()
        self.stops.close()
