"""A gate in front of the live test server, served on 127.0.0.1 by the test: it passes each
request on and records what the server answered, and a test can shut it (the server is down:
connections are refused), open it again on the same port, or hold answers back (a send caught
in the middle, with the server already done)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.served import free_port


@dataclass(frozen=True)
class Passed:
    method: str
    path: str
    status: int
    body: Any  # the request's JSON


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server: _Server

    def do_POST(self) -> None:
        self.server.gate._pass(self)

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, gate: Gate, port: int) -> None:
        self.gate = gate
        super().__init__(("127.0.0.1", port), _Handler)


class Gate:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.passed: list[Passed] = []
        self.held = threading.Event()  # set: answers are held back
        self.holding = threading.Semaphore(0)  # released once per answer held
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: _Server | None = None

    def open(self) -> Gate:
        self._closing.clear()
        self._httpd = _Server(self, self.port)
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def shut(self) -> None:
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def ingests(self) -> list[Passed]:
        with self._lock:
            return [p for p in self.passed if p.path == "/api/v1/ingest"]

    def _pass(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        data = handler.rfile.read(length) if length else None
        headers = {
            k: v
            for k, v in handler.headers.items()
            if k.lower() in ("authorization", "content-type")
        }
        request = urllib.request.Request(  # noqa: S310 - the live test server
            self.upstream + handler.path, data=data, method=handler.command, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
                status, body = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        with self._lock:
            self.passed.append(
                Passed(handler.command, handler.path, status, json.loads(data) if data else None)
            )
        if self.held.is_set():
            self.holding.release()
            self._closing.wait(120)  # never answered: the client is killed meanwhile
            return
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except OSError:
            pass
