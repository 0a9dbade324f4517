"""The embedded PostgreSQL and `manage.py serve`, as a newcomer's `make run` uses them."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from tests.served import answers_healthz, free_port, wait_for

BASE_DIR = Path(settings.BASE_DIR)
embedded_only = pytest.mark.skipif(
    not settings.EMBEDDED_DATABASE, reason="runs only on the embedded database (no DATABASE_URL)"
)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "ZM_DATA_DIR"}}
    env.update(PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE="zeromemory.settings", **extra)
    return env


@embedded_only
def test_second_process_reuses_the_running_server():
    from zeromemory import embedded_db

    code = (
        "import django, json; django.setup();"
        "from zeromemory import embedded_db as e;"
        "print(json.dumps([e._server.started_here, str(e._server.pgdata)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=child_env(ZM_DATA_DIR=str(settings.DATA_DIR)),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    started_here, pgdata = json.loads(out.strip().splitlines()[-1])
    assert started_here is False
    assert pgdata == str(embedded_db._server.pgdata)


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def start_serve(data_dir: Path, port: int) -> tuple[subprocess.Popen, list[str]]:
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=BASE_DIR,
        env=child_env(ZM_DATA_DIR=str(data_dir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "zero-memory is running at" in line:
            break
    try:
        wait_for(lambda: answers_healthz(f"http://127.0.0.1:{port}"), timeout=60, what="/healthz")
    except AssertionError:
        proc.kill()
        raise AssertionError("serve did not come up:\n" + "".join(lines)) from None
    return proc, lines


def stop_serve(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    return rest


@embedded_only
def test_make_run_first_start_serves_and_ctrl_c_stops_everything(tmp_path):
    data_dir = tmp_path / "var"
    port = free_port()
    proc, lines = start_serve(data_dir, port)
    try:
        output = "".join(lines)
        assert f"http://127.0.0.1:{port}/" in output
        password = re.search(r"password: (\S+)", output).group(1)
        assert re.search(r"username: admin", output)
        assert fetch(f"http://127.0.0.1:{port}/healthz") == (
            200,
            '{"status": "ok", "database": "ok"}',
        )
        status, page = fetch(f"http://127.0.0.1:{port}/login/")
        assert status == 200 and "csrfmiddlewaretoken" in page
        status, schema = fetch(f"http://127.0.0.1:{port}/api/schema/")
        assert status == 200 and "openapi: 3" in schema
    finally:
        rest = stop_serve(proc)
    assert proc.returncode == 0, rest
    assert "Stopped the embedded database." in rest
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()
    with pytest.raises(OSError):
        fetch(f"http://127.0.0.1:{port}/healthz")

    # The second start reuses the data, prints no new password, and the admin can still log in.
    proc, lines = start_serve(data_dir, port)
    try:
        assert "password:" not in "".join(lines)
        check = (
            "import django; django.setup();"
            "from django.contrib.auth import get_user_model;"
            "admin = get_user_model().objects.get(username='admin');"
            f"print(admin.is_active and admin.check_password({password!r}))"
        )
        out = subprocess.run(
            [sys.executable, "-c", check],
            cwd=BASE_DIR,
            env=child_env(ZM_DATA_DIR=str(data_dir)),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert out.strip().endswith("True")
    finally:
        stop_serve(proc)
    assert proc.returncode == 0
