"""The one harness for the processes a test starts: a free port, a wait for a condition, a web
process (uvicorn on the test database) and `manage.py serve` as `make run` starts it.

`Served` gets its own data dir (so its own embedded database), its own free port, output in a
log file, and a census of its processes. Its database is a copy of one that was initialised and
migrated once per test run (`migrated_data_dir`), so a served process starts in seconds instead
of running initdb and every migration again.
"""

from __future__ import annotations

import contextlib
import fcntl
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
import uuid
from collections.abc import Callable
from email.message import Message
from pathlib import Path

import psutil
from django.conf import settings

from tests.helpers import child_env

BASE_DIR = Path(settings.BASE_DIR)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(
    condition: Callable[[], object], *, timeout: float, what: str, interval: float = 0.1
) -> object:
    """Poll `condition` until it returns something true (an OSError counts as not yet) and
    return that; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            result = condition()
            if result:
                return result
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def answers_healthz(url: str) -> bool:
    """The readiness handshake of every web process: /healthz answers 200."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:  # noqa: S310
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def start_web(
    argv: list[str], *, env: dict[str, str], port: int, timeout: float = 90
) -> tuple[subprocess.Popen, str]:
    """A web process (`argv` serving the ASGI app on `port`) in its own process group, once it
    answers /healthz; its output is read by `stop_process_group`."""
    proc = subprocess.Popen(
        argv,
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        return proc.poll() is not None or answers_healthz(base)

    try:
        wait_for(up, timeout=timeout, what=f"{argv} to answer /healthz")
    except AssertionError:
        raise AssertionError("web process did not come up:\n" + stop_process_group(proc)) from None
    if proc.poll() is not None:
        raise AssertionError("web process exited:\n" + stop_process_group(proc))
    return proc, base


def start_uvicorn(*extra: str, port: int | None = None, **env: str) -> tuple[subprocess.Popen, str]:
    """uvicorn serving the ASGI app on the test database (DATABASE_URL), on a free port."""
    port = port or free_port()
    argv = [sys.executable, "-m", "uvicorn", "zeromemory.asgi:application"]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log", *extra]
    return start_web(argv, env=child_env(**env), port=port, timeout=60)


def stop_process_group(proc: subprocess.Popen) -> str:
    """SIGTERM to the process group (SIGKILL after 20 s); what the process wrote."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return out or ""


# --- a migrated database to copy ---------------------------------------------------------------

TEMPLATE_PREFIX = "zm-serve-template-"
_OWN_RUN = uuid.uuid4().hex
_template: Path | None = None
_template_hold: int | None = None  # a shared lock on the template, held while this process runs


def serve_environment(data_dir: Path, **env: str) -> dict[str, str]:
    """The environment of a process of a served instance: its own ZM_DATA_DIR (and so its own
    embedded database), none of the test run's database or pytest variables."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "ZM_DATA_DIR"} and not k.startswith("PYTEST")
    }
    environment.update(
        PYTHONUNBUFFERED="1",
        DJANGO_SETTINGS_MODULE="zeromemory.settings",
        ZM_DATA_DIR=str(data_dir),
        ZM_TESTING="true",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        **env,
    )
    return environment


def migrated_data_dir() -> Path:
    """A data dir whose embedded database is initialised and migrated, its server stopped: built
    on first use in a test run, then copied by each `Served`.

    One per test run (the xdist workers of a run share it: the first builds it under an
    exclusive lock, the others wait and copy). Each process using it holds a shared lock on it
    until it exits, so a later run removes the templates of finished runs and none in use."""
    global _template, _template_hold
    if _template is not None:
        return _template
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or _OWN_RUN
    root = Path(tempfile.gettempdir())
    template = root / f"{TEMPLATE_PREFIX}{run}"
    # Two locks: building takes the run's build lock exclusively (a worker that finds the
    # template built copies it); using it holds a shared lock on the run's hold lock until the
    # process exits. One lock for both would deadlock: a second worker waiting for the exclusive
    # lock never gets it while the first holds its shared one.
    hold = os.open(root / f"{TEMPLATE_PREFIX}{run}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(hold, fcntl.LOCK_SH)
    build = os.open(root / f"{TEMPLATE_PREFIX}{run}.build", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(build, fcntl.LOCK_EX)
        if not (template / "migrated").exists():
            _remove_finished_templates(root, keep=run)
            shutil.rmtree(template, ignore_errors=True)
            _migrate_into(template)
            (template / "migrated").touch()
    finally:
        os.close(build)  # releases the build lock
    _template, _template_hold = template, hold
    return template


def _migrate_into(template: Path) -> None:
    from zeromemory import embedded_db

    template.mkdir()
    try:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
            cwd=BASE_DIR,
            env=serve_environment(template),
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"migrating the template database failed:\n{exc.stderr}") from None
    finally:
        pgdata = template / "pgdata"
        if (pgdata / "postmaster.pid").exists():
            embedded_db.stop_server(pgdata)  # a clean stop: a copy starts without recovery
    (template / "pgdata" / ".handle_pids.json").unlink(missing_ok=True)  # pgserver's, per server


def _remove_finished_templates(root: Path, *, keep: str) -> None:
    for lock in root.glob(f"{TEMPLATE_PREFIX}*.lock"):
        if lock.name == f"{TEMPLATE_PREFIX}{keep}.lock":
            continue
        try:
            fd = os.open(lock, os.O_RDWR)
        except FileNotFoundError:
            continue  # removed meanwhile by another run
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # a run still going
        shutil.rmtree(lock.with_suffix(""), ignore_errors=True)
        lock.with_suffix(".build").unlink(missing_ok=True)
        lock.unlink(missing_ok=True)
        os.close(fd)


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

    def __init__(
        self, tmp_path: Path, *, port: int | None = None, migrated: bool = True, **env: str
    ) -> None:
        """Start serve with `env` added to its environment. With `migrated` (and no
        DATABASE_URL), its database starts as a copy of the run's migrated one; without, serve
        initialises and migrates its own, as on a first `make run`."""
        # Not under tmp_path: as root the embedded PostgreSQL runs as its own user, and every
        # pytest run on the machine resets its base directory to mode 0700, locking that user
        # out of a data directory there mid-test.
        self.root = Path(tempfile.mkdtemp(prefix="zm-serve-"))
        self.data_dir = self.root / "var"
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "serve.log"
        # One web process unless a test is about several: each loads the model, seconds of CPU
        # that the rest of the suite waits for on a small machine.
        env.setdefault("ZM_WEB_PROCESSES", "1")
        # No bulk process either, unless a test is about them (tests/test_bulk_process.py).
        env.setdefault("ZM_BULK_PROCESSES", "0")
        self.env = serve_environment(self.data_dir, **env)
        if migrated and "DATABASE_URL" not in env:
            self.data_dir.mkdir()
            # cp -a keeps the files' owner (the embedded server's own user when run as root).
            subprocess.run(
                ["cp", "-a", str(migrated_data_dir() / "pgdata"), str(self.data_dir)],
                check=True,
            )
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port)],
            cwd=BASE_DIR,
            env=self.env,
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
        return answers_healthz(self.url)

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
