"""Requests first, by stopping the background (zeromemory.conductor): while a process tells of an
interactive request in flight (zeromemory.core.foreground, as a web process of `serve` does),
the background's process groups are stopped; they run again when it ends, when one stop has
lasted its bound, and for their share while requests keep coming; a group someone else stopped
is left as it is.

Real processes throughout: a CPU-bound background process in a session (and group) of its own,
and a process holding a request in flight that tells on the descriptor `serve` gives its web
processes. The conductor steps in a thread of the test, as in the supervisor's loop."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import psutil
import pytest
from django.conf import settings

from tests.served import wait_for
from zeromemory.conductor import Conductor

# A request in flight while stdin is open, told on the descriptor in argv[2].
HOLDER = """
import sys
from django.conf import settings
file, fd = sys.argv[1], int(sys.argv[2])
settings.configure(FOREGROUND_FILE=file, FOREGROUND_WAIT_MS=200, CONDUCTOR_FD=fd)
from zeromemory.core import foreground
with foreground.interactive():
    print("in flight", flush=True)
    sys.stdin.readline()
print("ended", flush=True)
sys.stdin.readline()
"""


def stopped(proc: psutil.Process) -> bool:
    return proc.status() == psutil.STATUS_STOPPED


@pytest.fixture
def background() -> Iterator[psutil.Process]:
    """A busy process leading a group of its own, as `serve` starts the worker."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        yield psutil.Process(proc.pid)
    finally:
        proc.kill()
        proc.wait()


class Stepping:
    """A conductor stepping in a thread, over the groups given, until closed."""

    def __init__(self, conductor: Conductor, groups: list[int]) -> None:
        self.conductor = conductor
        self.groups = groups
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            due = self.conductor.step(self.groups)
            select.select([self.conductor], [], [], min(due, 0.05))

    def close(self) -> None:
        self.done.set()
        self.thread.join()
        self.conductor.close()


@pytest.fixture
def conduct(background):
    made: list[Stepping] = []

    def start(*, longest: float = 0.1, share: float = 0.25) -> Conductor:
        stepping = Stepping(Conductor(longest=longest, share=share), [background.pid])
        made.append(stepping)
        return stepping.conductor

    yield start
    for stepping in made:
        stepping.close()


class Holder:
    """A process with one interactive request in flight until `end()`."""

    def __init__(self, conductor: Conductor) -> None:
        fd = conductor.sender_fd
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(settings.FOREGROUND_FILE), str(fd)],
            cwd=settings.BASE_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            pass_fds=(fd,),
        )
        assert self.proc.stdout.readline().strip() == "in flight"

    def end(self) -> None:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ended"

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def states(proc: psutil.Process, seconds: float) -> list[bool]:
    """Whether `proc` was stopped, sampled every millisecond or so for `seconds`."""
    seen = []
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        seen.append(stopped(proc))
        time.sleep(0.001)
    return seen


def test_the_background_is_stopped_while_a_request_is_in_flight_and_runs_after_it(
    conduct, background
):
    conductor = conduct(longest=30.0)
    assert not any(states(background, 0.2))  # nothing in flight: it runs
    holder = Holder(conductor)
    try:
        wait_for(lambda: stopped(background), timeout=10, what="the background stopped")
        assert all(states(background, 0.3))  # within its bound: stopped throughout
        holder.end()
        wait_for(lambda: not stopped(background), timeout=10, what="the background continued")
        assert not any(states(background, 0.2))
    finally:
        holder.kill()


def test_a_request_in_flight_for_long_stops_the_background_within_its_bound_and_share(
    conduct, background
):
    conductor = conduct(longest=0.05, share=0.25)
    holder = Holder(conductor)
    try:
        wait_for(lambda: stopped(background), timeout=10, what="the background stopped")
        seen = states(background, 1.5)
        # Stopped, continued again while the request is still in flight, and stopped again.
        assert seen.count(True) and seen.count(False)
        changes = sum(1 for a, b in zip(seen, seen[1:], strict=False) if a != b)
        assert changes >= 4
        cpu_before = sum(background.cpu_times()[:2])
        time.sleep(1.0)
        assert sum(background.cpu_times()[:2]) - cpu_before > 0  # it goes on, however slowly
    finally:
        holder.kill()


def test_a_web_process_gone_with_a_request_in_flight_leaves_nothing_stopped(conduct, background):
    conductor = conduct(longest=30.0)
    holder = Holder(conductor)
    wait_for(lambda: stopped(background), timeout=10, what="the background stopped")
    holder.kill()  # its number never comes down: the supervisor forgets the process it reaped
    conductor.forget(holder.proc.pid)
    conductor.sender.send(b"")  # wakes the stepping thread (a short message is ignored)
    wait_for(lambda: not stopped(background), timeout=10, what="the background continued")


def test_a_group_stopped_by_someone_else_is_left_stopped(conduct, background):
    conductor = conduct(longest=30.0)
    background.send_signal(signal.SIGSTOP)  # an operator's kill -STOP, or a bench's pause
    holder = Holder(conductor)
    try:
        time.sleep(0.1)
        holder.end()
        assert all(states(background, 0.3))
    finally:
        holder.kill()
        background.send_signal(signal.SIGCONT)


def test_with_no_stop_allowed_or_a_share_of_all_nothing_is_ever_stopped(conduct, background):
    for longest, share in ((0.0, 0.25), (0.1, 1.0)):
        conductor = conduct(longest=longest, share=share)
        holder = Holder(conductor)
        try:
            assert not any(states(background, 0.3))
        finally:
            holder.kill()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("ZM_BACKGROUND_SHARE", "0", "ZM_BACKGROUND_SHARE must be at least 1, not 0"),
        ("ZM_BACKGROUND_SHARE", "101", "ZM_BACKGROUND_SHARE is a percentage, not 101"),
        ("ZM_FOREGROUND_STOP_MS", "-1", "ZM_FOREGROUND_STOP_MS must be at least 0, not -1"),
        ("ZM_FOREGROUND_STOP_MS", "soon", "ZM_FOREGROUND_STOP_MS must be an integer, not 'soon'"),
    ],
)
def test_the_bounds_are_checked_when_the_server_starts(variable, value, message):
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=settings.BASE_DIR,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "zeromemory.settings", variable: value},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert message in done.stderr
