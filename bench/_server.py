"""A real server for bench/locomo.py: `manage.py serve` on a free port with its own data
directory, stopped with everything it started, and JSON over one keep-alive HTTP connection."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from _django import ROOT


class Api:
    """JSON over one keep-alive HTTP connection."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.token = token

    def call(self, method: str, path: str, body: object | None = None) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        payload = None if body is None else json.dumps(body)
        try:
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
        except (ConnectionError, http.client.RemoteDisconnected):
            # The server closes a connection idle past its keep-alive timeout; open a new one.
            self.connection.close()
            self.connection.request(method, path, body=payload, headers=headers)
            response = self.connection.getresponse()
        raw = response.read()
        return response.status, (json.loads(raw) if raw else {})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(data_dir: Path, port: int, log) -> subprocess.Popen:
    env = dict(os.environ, ZM_DATA_DIR=str(data_dir), ZM_API_RATE="", ZM_LOG_LEVEL="WARNING")
    env.pop("DATABASE_URL", None)
    command = [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)

    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}; see {log.name}")
        try:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            probe.request("GET", "/healthz")
            if probe.getresponse().status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.5)
    server.terminate()
    raise SystemExit(f"the server did not answer /healthz in time; see {log.name}")


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()  # serve stops its web server, its worker and the embedded database
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
