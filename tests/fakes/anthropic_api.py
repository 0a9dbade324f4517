"""A fake Anthropic Messages API served on 127.0.0.1, driven by a script of canned answers.

Tests talk to it through the real `anthropic` SDK over real HTTP, so what is exercised is our
request as the SDK builds it and our handling of the SDK's exceptions, not a mock of either.

    fake_anthropic.script(tool_answer("Hello"), status(429, headers={"retry-after": "7"}))

Each POST /v1/messages takes the next step of the script; once the script is empty the `default`
step answers (a 500 "script exhausted" unless changed, so a test that makes more calls than it
planned notices). Every request is recorded, headers and parsed JSON, for assertions.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.fakes.anthropic_steps import (
    MESSAGES_PATH,
    SCRIPT_EXHAUSTED,
    RecordedRequest,
    Reply,
    Step,
    delay,
    error_body,
    malformed_tool_input,
    memories_answer,
    memories_answer_from,
    raw,
    request_ids,
    status,
    step_failed,
    text_only,
    tool_answer,
    tool_answer_from,
)

__all__ = [
    "FakeAnthropicAPI",
    "RecordedRequest",
    "Reply",
    "Step",
    "delay",
    "error_body",
    "fake_anthropic",
    "malformed_tool_input",
    "memories_answer",
    "memories_answer_from",
    "raw",
    "status",
    "text_only",
    "tool_answer",
    "tool_answer_from",
]


# --- server ---------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so no handler thread lingers on a keep-alive socket.
    protocol_version = "HTTP/1.0"
    # A client that connects and never sends a request cannot hold up the teardown for long.
    timeout = 5
    server: _Server

    def do_POST(self) -> None:
        self.server.api._handle(self)

    do_GET = do_POST
    do_PUT = do_POST
    do_DELETE = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests assert on .requests instead


class _Server(ThreadingHTTPServer):
    # Handler threads are joined on close; the delay step wakes up when the server stops.
    daemon_threads = False
    block_on_close = True

    def __init__(self, api: FakeAnthropicAPI) -> None:
        self.api = api
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeAnthropicAPI:
    """The fake API: `start()`, `script(*steps)`, then read `requests`; `stop()` at the end."""

    def __init__(self, default: Step = SCRIPT_EXHAUSTED) -> None:
        self.default = default
        self._script: deque[Step] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --

    def start(self) -> FakeAnthropicAPI:
        self._httpd = _Server(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-anthropic-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeAnthropicAPI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- test API --

    @property
    def url(self) -> str:
        """The base URL to give the SDK (it appends /v1/messages)."""
        if self._httpd is None:
            raise RuntimeError("the fake Anthropic API is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *steps: Step) -> FakeAnthropicAPI:
        """Queue answers for the next requests to /v1/messages, in order."""
        with self._lock:
            self._script.extend(steps)
        return self

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def pending_steps(self) -> int:
        with self._lock:
            return len(self._script)

    # -- serving --

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        request = RecordedRequest(
            method=handler.command,
            path=handler.path,
            headers={name.lower(): value for name, value in handler.headers.items()},
            body=body,
            json=parsed,
        )
        is_messages = handler.command == "POST" and handler.path.split("?")[0] == MESSAGES_PATH
        with self._lock:
            self._requests.append(request)
            step: Step | None = None
            if is_messages:
                step = self._script.popleft() if self._script else self.default

        if step is None:
            reply = status(404, error_body(404, f"no route for {request.method} {request.path}"))
            reply = reply.answer(request, self._stopping)
        else:
            try:
                reply = step.answer(request, self._stopping)
            except Exception as exc:
                reply = step_failed(step, exc)

        try:
            handler.send_response(reply.status)
            for name, value in {
                "request-id": f"req_fake{next(request_ids):08d}",
                **reply.headers,
            }.items():
                handler.send_header(name, value)
            handler.send_header("content-length", str(len(reply.body)))
            handler.end_headers()
            handler.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (the timeout tests)


@pytest.fixture
def fake_anthropic(settings, monkeypatch) -> Iterator[FakeAnthropicAPI]:
    """A running fake API that the settings point the translator at (key "test-key", 2 s)."""
    # A proxy configured in the environment must not swallow requests to the loopback server.
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    server = FakeAnthropicAPI().start()
    settings.ANTHROPIC_API_KEY = "test-key"
    settings.ANTHROPIC_BASE_URL = server.url
    settings.TRANSLATOR_TIMEOUT_SECONDS = 2
    try:
        yield server
    finally:
        server.stop()
