"""The watcher's loops: `run` (follow every transcript, deliver, forever), and the Claude Code
hook (note what to flush, start a detached child that sends it, return at once).

One process at a time reads transcripts and sends: a lock on the state directory says which.
A hook that finds a `run` holding it leaves the flush request to it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from zmwatch.api import Client
from zmwatch.config import Config
from zmwatch.deliver import Deliverer
from zmwatch.files import Lock, read_json, write_json
from zmwatch.follow import Follower
from zmwatch.spool import Spool
from zmwatch.state import State

log = logging.getLogger("zm-watch")
HOOK_LOCK_WAIT = 60.0  # how long a hook's child waits for another hook's child


class Watcher:
    def __init__(self, config: Config, home: Path) -> None:
        self.config = config
        self.state = State(config.state_dir)
        self.spool = Spool(config.state_dir)
        self.follower = Follower(config=config, state=self.state, spool=self.spool, home=home)
        client = Client(url=config.url, token=config.token)
        self.deliverer = Deliverer(client=client, config=config, state=self.state, spool=self.spool)

    def flush_requested(self) -> None:
        """Read the transcripts hooks asked to flush, and spool all they hold."""
        for request in sorted((self.config.state_dir / "flush").glob("*.json")):
            path = read_json(request, {}).get("path")
            if isinstance(path, str) and Path(path).is_file():
                self.follower.step(Path(path), flush=True)
            request.unlink(missing_ok=True)


def request_flush(state_dir: Path, transcript: str) -> None:
    name = hashlib.sha256(transcript.encode()).hexdigest()[:32]
    write_json(state_dir / "flush" / f"{name}.json", {"path": transcript})


def run(config: Config, home: Path, *, once: bool = False) -> int:
    lock = Lock(config.state_dir)
    while not lock.acquire("run"):
        if lock.held_by_run():
            pid = lock.holder().get("pid")
            log.error("another zm-watch run (pid %s) is following these transcripts", pid)
            return 1
        time.sleep(0.5)  # a hook's child: it is done in a moment
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    watcher = Watcher(config, home)
    log.info("following transcripts for %s (state in %s)", config.url, config.state_dir)
    try:
        while not stopping:
            watcher.flush_requested()
            watcher.follower.poll(flush=once)
            delivered = watcher.deliverer.deliver(backoff=not once)
            if once:
                return 0 if delivered else 1
            time.sleep(config.poll)
    except KeyboardInterrupt:
        pass
    finally:
        lock.release()
    return 0


def start_hook_child(state_dir: Path) -> None:
    """Start `zm-watch hook --send` detached from the agent (its own session, no terminal),
    logging to the state directory."""
    package_parent = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with (state_dir / "hook.log").open("a") as log_file:
        subprocess.Popen(  # noqa: S603 - our own module, with this interpreter
            [sys.executable, "-m", "zmwatch", "hook", "--send"],
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env=env,
            start_new_session=True,
            close_fds=True,
        )


def hook_send(config: Config, home: Path) -> int:
    """The hook's child: flush the requested transcripts and deliver, unless a `run` is there
    to do it."""
    lock = Lock(config.state_dir)
    deadline = time.monotonic() + HOOK_LOCK_WAIT
    while not lock.acquire("hook"):
        if lock.held_by_run() or time.monotonic() > deadline:
            return 0
        time.sleep(0.2)
    try:
        watcher = Watcher(config, home)
        watcher.flush_requested()
        return 0 if watcher.deliverer.deliver() else 1
    finally:
        lock.release()
