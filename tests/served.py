"""`manage.py serve` as `make run` starts it, in a test: its own data dir (so its own embedded
database), its own free port, output in a log file, and a census of its processes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from email.message import Message
from pathlib import Path

import psutil
from django.conf import settings

BASE_DIR = Path(settings.BASE_DIR)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition: Callable[[], object], *, timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            result = condition()
            if result:
                return result
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def request(
    url: str,
    *,
    method: str = "GET",
    body: object = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> tuple[int, Message, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})  # noqa: S310
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:  # noqa: S310 - loopback
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


class Served:
    """One `manage.py serve` process tree with its own ZM_DATA_DIR and port."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        # Not under tmp_path: as root the embedded PostgreSQL runs as its own user, and every
        # pytest run on the machine resets its base directory to mode 0700, locking that user
        # out of a data directory there mid-test.
        self.root = Path(tempfile.mkdtemp(prefix="zm-serve-"))
        self.data_dir = self.root / "var"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "serve.log"
        child_env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "ZM_DATA_DIR"} and not k.startswith("PYTEST")
        }
        child_env.update(
            PYTHONUNBUFFERED="1",
            DJANGO_SETTINGS_MODULE="zeromemory.settings",
            ZM_DATA_DIR=str(self.data_dir),
            ZM_TESTING="true",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
            **env,
        )
        self.env = child_env
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port)],
            cwd=BASE_DIR,
            env=child_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def django(self, code: str) -> str:
        """Run Python with Django set up against this serve's database; its last output line."""
        done = subprocess.run(
            [sys.executable, "-c", "import django; django.setup()\n" + code],
            cwd=BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip().splitlines()[-1]

    def create_user_with_token(self, username: str, password: str) -> str:
        """A user (with their personal scope) and an API token of theirs; returns its secret."""
        return self.django(
            "from django.contrib.auth import get_user_model\n"
            "from zeromemory.core.actor import Actor\n"
            "from scopes.services import token_create\n"
            f"user = get_user_model().objects.create_user({username!r}, password={password!r})\n"
            "print(token_create(actor=Actor(user=user), name='test').secret)\n"
        )

    def log(self) -> str:
        return self.log_path.read_text()

    def wait_ready(self, timeout: float = 180) -> None:
        def up() -> bool:
            assert self.process.poll() is None, "serve exited:\n" + self.log()
            return self.answers()

        wait_for(up, timeout=timeout, what="serve to answer /healthz\n")

    def answers(self) -> bool:
        try:
            return request(f"{self.url}/healthz", timeout=5)[0] == 200
        except OSError:
            return False

    def children(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children()

    def children_matching(self, marker: str) -> list[psutil.Process]:
        """The live direct children whose command line contains `marker` (zeromemory.web,
        qcluster), oldest first."""
        found = []
        for proc in self.children():
            with contextlib.suppress(psutil.NoSuchProcess):
                if marker in " ".join(proc.cmdline()) and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
        return sorted(found, key=lambda proc: proc.create_time())

    def child(self, marker: str) -> psutil.Process:
        found = self.children_matching(marker)
        assert found, f"no {marker} child:\n{self.log()}"
        return found[0]

    def restarted(self, marker: str, before: list[psutil.Process]) -> psutil.Process | None:
        """A child that replaced one of `before`, once there are as many again."""
        known = {proc.pid for proc in before}
        now = self.children_matching(marker)
        new = [proc for proc in now if proc.pid not in known]
        return new[0] if new and len(now) == len(before) else None

    def processes(self) -> list[psutil.Process]:
        """Every live process on this machine started for this serve (by its ZM_DATA_DIR)."""
        found = []
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                if proc.status() == psutil.STATUS_ZOMBIE or proc.name().startswith("postgres"):
                    continue
                if proc.environ().get("ZM_DATA_DIR") == str(self.data_dir):
                    found.append(proc)
        return found

    def orphans(self) -> list[psutil.Process]:
        """Live processes of this serve that are neither serve nor one of its descendants."""
        found = []
        for proc in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):  # gone meanwhile: no orphan
                if (
                    proc.pid == self.process.pid
                    or self.process.poll() is None
                    and any(parent.pid == self.process.pid for parent in proc.parents())
                ):
                    continue
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
        return found

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self._log.close()
        return self.process.returncode

    def cleanup(self) -> None:
        """Whatever a failed test left: every process of this serve, then its database."""
        self.stop()
        for proc in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        pgdata = self.data_dir / "pgdata"
        if (pgdata / "postmaster.pid").exists():
            from zeromemory import embedded_db

            embedded_db.stop_server(pgdata)
        shutil.rmtree(self.root, ignore_errors=True)
