"""A small process supervisor for `manage.py serve`: web and worker processes, restarted when
they die, all stopped together.

Each child runs in a session (and process group) of its own, so the group holds everything the
child starts: uvicorn's workers, django-q2's sentinel, pusher, monitor and task workers. When a
child exits, whatever it left behind in its group is killed before it is started again, so a
dead qcluster never leaves orphans running against the database. A terminal's Ctrl-C reaches
only the supervisor (children are in other groups); it then sends SIGTERM to every child, waits
for their groups to empty, and kills what is left. A child that keeps dying is restarted after
a growing delay.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zeromemory.conductor import Conductor

logger = logging.getLogger("zeromemory.supervisor")

FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
# A child that ran this long before it died is restarted at once: it was not crash-looping.
STABLE_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 15.0
POLL_SECONDS = 0.2


@dataclass(frozen=True)
class ChildSpec:
    name: str
    argv: Sequence[str]
    # Descriptors the child inherits (the web processes' shared listening socket).
    pass_fds: tuple[int, ...] = ()
    # The child's niceness at least (the worker's: background work yields to the web processes)
    # and variables added to its environment.
    nice: int = 0
    env: dict[str, str] = field(default_factory=dict)
    # Stopped while a request is in flight in a web process (zeromemory.conductor): the bulk
    # processes and the worker.
    background: bool = False


@dataclass
class Child:
    spec: ChildSpec
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    restart_at: float = 0.0
    failures: int = 0
    restarts: int = 0
    pids_seen: set[int] = field(default_factory=set)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


def kill_group(pgid: int, sig: int) -> bool:
    """Signal every process in a group; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of the group changed user: nothing of ours is left
        return False
    return True


def group_exists(pgid: int) -> bool:
    return kill_group(pgid, 0)


class Supervisor:
    """Start `specs`, restart any that exits, stop all on SIGINT or SIGTERM; `run()` blocks.
    With a `conductor`, the background children are stopped while the web children have
    requests in flight (zeromemory.conductor), in the same loop."""

    def __init__(
        self,
        specs: Sequence[ChildSpec],
        *,
        cwd: Path,
        env: dict[str, str] | None = None,
        conductor: Conductor | None = None,
    ) -> None:
        self.children = [Child(spec=spec) for spec in specs]
        self.cwd = cwd
        self.env = env
        self.conductor = conductor
        self.stopping = False

    def request_stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    def run(self) -> int:
        previous = {
            sig: signal.signal(sig, self.request_stop) for sig in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            for child in self.children:
                self._start(child)
            next_check = time.monotonic() + POLL_SECONDS
            while not self.stopping:
                now = time.monotonic()
                if now >= next_check:
                    for child in self.children:
                        if child.process is not None and child.process.poll() is not None:
                            self._exited(child, now)
                        elif child.process is None and now >= child.restart_at:
                            self._start(child)
                    next_check = now + POLL_SECONDS
                wait = max(0.0, next_check - now)
                if self.conductor is None:
                    time.sleep(wait)
                    continue
                due = self.conductor.step(self._background_groups())
                select.select([self.conductor], [], [], min(wait, due))
        finally:
            if self.conductor is not None:
                self.conductor.release()  # a stopped process would not see its SIGTERM
            self.stop_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    def _background_groups(self) -> list[int]:
        return [c.process.pid for c in self.children if c.spec.background and c.process is not None]

    def _start(self, child: Child) -> None:
        spec = child.spec
        env = {**(self.env if self.env is not None else os.environ), **spec.env}
        child.process = subprocess.Popen(
            list(spec.argv),
            cwd=self.cwd,
            env=env,
            start_new_session=True,
            pass_fds=spec.pass_fds,
            # Set in the child before it executes (the supervisor runs no threads of its own).
            preexec_fn=partial(lower_priority, spec.nice) if spec.nice else None,
        )
        child.started_at = time.monotonic()
        child.pids_seen.add(child.process.pid)
        if child.restarts:
            logger.warning("restarted %s (pid %s)", child.spec.name, child.process.pid)

    def _exited(self, child: Child, now: float) -> None:
        process = child.process
        assert process is not None
        # What the child started lives on in its group (a qcluster's sentinel and workers).
        kill_group(process.pid, signal.SIGKILL)
        ran = now - child.started_at
        child.failures = 0 if ran >= STABLE_SECONDS else child.failures + 1
        delay = (
            0.0
            if child.failures == 0
            else min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (child.failures - 1))
        )
        logger.error(
            "%s (pid %s) exited with %s after %.0f s; restarting in %.1f s",
            child.spec.name,
            process.pid,
            _describe(process.returncode),
            ran,
            delay,
        )
        if self.conductor is not None:  # a web process's requests in flight went with it
            self.conductor.forget(process.pid)
        child.process = None
        child.restart_at = now + delay
        child.restarts += 1

    def stop_all(self) -> None:
        """SIGTERM every child, wait for its group to empty, then SIGKILL whatever remains.

        Only the leader gets SIGTERM: it stops its own processes in order (django-q2's sentinel
        and workers die at once on a SIGTERM of their own, mid-task)."""
        groups = [c.process.pid for c in self.children if c.process is not None]
        for child in self.children:
            if child.alive:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for child in self.children:
            if child.process is None:
                continue
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        # The leaders are gone or late; their groups may still hold workers finishing up.
        while time.monotonic() < deadline and any(group_exists(pgid) for pgid in groups):
            time.sleep(POLL_SECONDS)
        for pgid in groups:
            if kill_group(pgid, signal.SIGKILL):
                logger.warning("killed what was left of process group %s", pgid)
        for child in self.children:
            if child.process is not None:
                child.process.wait()
                child.process = None


# Linux's autogroup scheduling (CONFIG_SCHED_AUTOGROUP, on in many distributions' kernels)
# shares the CPU between sessions first and by niceness only inside each: a process at niceness
# 19 in a session of its own got as much CPU as one at 0 in another (measured on 2 cores). The
# niceness of a session's group is this file's.
AUTOGROUP = Path("/proc/self/autogroup")


def lower_priority(nice: int) -> int:
    """This process at niceness `nice` at least (never raised back: that needs privileges), and
    its session's autogroup too when it leads that session (the worker `serve` starts in a
    session of its own); returns the niceness it runs at."""
    if os.getpriority(os.PRIO_PROCESS, 0) < nice:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    if os.getsid(0) == os.getpid():
        lower_autogroup(nice)
    return os.getpriority(os.PRIO_PROCESS, 0)


def lower_autogroup(nice: int) -> None:
    """This session's autogroup at niceness `nice` at least; nothing where the kernel has none
    (or schedules by cgroups instead: then the process's niceness is what counts)."""
    try:
        current = int(AUTOGROUP.read_text().split()[-1])  # "/autogroup-123 nice 0"
        if current < nice:
            AUTOGROUP.write_text(str(nice))
    except (OSError, ValueError, IndexError):
        return


def _describe(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-returncode).name
    return f"code {returncode}"
