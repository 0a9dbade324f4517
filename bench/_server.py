"""A real server for the benchmarks: `manage.py serve` on a free port with its own data
directory, stopped with everything it started; JSON over one keep-alive HTTP connection; and the
baseline beside it, an empty HTTP server of the standard library on the same machine."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _django import ROOT


class Api:
    """JSON over one keep-alive HTTP connection."""

    def __init__(self, port: int, token: str | None = None, host: str = "127.0.0.1") -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=120)
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
        try:
            return response.status, (json.loads(raw) if raw else {})
        except ValueError:  # a proxy's own error page
            return response.status, {"raw": raw[:200].decode(errors="replace")}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(
    data_dir: Path, port: int, log, *, keep_rate_limit: bool = False
) -> subprocess.Popen:
    """`manage.py serve` as `make run` starts it, with the rate limit off unless kept (the
    serving benchmarks keep every default of the product) and the query vector cache off."""
    env = dict(os.environ, ZM_DATA_DIR=str(data_dir), ZM_API_RATE="", ZM_LOG_LEVEL="WARNING")
    if keep_rate_limit:
        env.pop("ZM_API_RATE")
    # The benches cycle through a few hundred questions, so a cached query vector would time a
    # repeat, not a query: every query runs the model unless the caller's environment says
    # otherwise (ZM_QUERY_CACHE_ENTRIES=2048 is the product's default).
    env.setdefault("ZM_QUERY_CACHE_ENTRIES", "0")
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
                settled(server)
                return server
        except OSError:
            pass
        time.sleep(0.5)
    server.terminate()
    raise SystemExit(f"the server did not answer /healthz in time; see {log.name}")


def tree_cpu_seconds(root: int) -> float:
    """The CPU time used so far by `root` and every process under it, from /proc."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command's name
        parents[int(entry)] = int(fields[1])
        ticks[int(entry)] = int(fields[11]) + int(fields[12])  # utime + stime
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo += [child for child, parent in parents.items() if parent == pid]
    return sum(ticks.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def settled(server: subprocess.Popen, *, share: float = 0.05, timeout: float = 90) -> None:
    """Wait until the server's processes have finished starting: /healthz answers while the
    web and bulk processes still load the model and check its traced graph (a core's worth for
    about five seconds), and a bench timing requests then would time them beside that. Settled
    when they use less than `share` of a core over a second."""
    deadline = time.monotonic() + timeout
    used = now = tree_cpu_seconds(server.pid)
    while time.monotonic() < deadline:
        time.sleep(1)
        now = tree_cpu_seconds(server.pid)
        if now - used < share:
            return
        used = now
    print(f"the server's processes still used {now - used:.2f} of a core after {timeout:.0f} s")


def stop_server(server: subprocess.Popen) -> None:
    server.terminate()  # serve stops its web server, its worker and the embedded database
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@contextmanager
def served(data_dir: Path, *, keep_rate_limit: bool = False) -> Iterator[int]:
    """A server for the block, on a free port (yielded), its log in `data_dir/server.log`. On
    the way out this process's database connections close, then the server stops with all it
    started (its embedded database included)."""
    from django.conf import settings

    port = free_port()
    with (data_dir / "server.log").open("a") as log:
        server = start_server(data_dir, port, log, keep_rate_limit=keep_rate_limit)
        print(f"server: manage.py serve on 127.0.0.1:{port}, ZM_DATA_DIR={data_dir}")
        try:
            yield port
        finally:
            if settings.configured:
                from django.db import connections

                connections.close_all()
            stop_server(server)


BASELINE = """
import http.server, sys
class Empty(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 65536  # headers and body leave in one write, as a real server sends them
    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    do_GET = do_POST = answer
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Empty).serve_forever()
"""


def start_baseline(port: int) -> subprocess.Popen:
    """An HTTP/1.1 server that answers {} to everything: what HTTP alone costs here."""
    server = subprocess.Popen([sys.executable, "-c", BASELINE, str(port)])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("the baseline server did not start")
