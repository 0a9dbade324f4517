"""A fake Anthropic Messages API served on 127.0.0.1, driven by a script of canned answers.

Tests talk to it through the real `anthropic` SDK over real HTTP, so what is exercised is our
request as the SDK builds it and our handling of the SDK's exceptions, not a mock of either.

    fake_anthropic.script(tool_answer("Hello"), status(429, headers={"retry-after": "7"}))

Each POST /v1/messages takes the next step of the script; once the script is empty the `default`
step answers (a 500 "script exhausted" unless changed, so a test that makes more calls than it
planned notices). Every request is recorded, headers and parsed JSON, for assertions.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "FakeAnthropicAPI",
    "RecordedRequest",
    "Reply",
    "Step",
    "delay",
    "error_body",
    "fake_anthropic",
    "malformed_tool_input",
    "raw",
    "status",
    "text_only",
    "tool_answer",
    "tool_answer_from",
]

DEFAULT_TOOL_NAME = "record_english_text"
MESSAGES_PATH = "/v1/messages"

# The error types the real API puts in {"type": "error", "error": {"type": ...}}.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

_ids = itertools.count(1)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # the parsed body, None when it is not JSON


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]


@dataclass(frozen=True)
class Step:
    """One scripted answer. `answer` gets the request and an event set when the server stops."""

    name: str
    answer: Callable[[RecordedRequest, threading.Event], Reply]

    def __repr__(self) -> str:
        return f"<Step {self.name}>"


# --- steps ----------------------------------------------------------------------------------


def tool_answer(english: str) -> Step:
    """A proper tool-use message whose input is {"english": english}."""
    return Step(f"tool_answer({english!r})", lambda request, _: _tool_use(request, english))


def tool_answer_from(fn: Callable[[Any], str]) -> Step:
    """A tool-use message whose English is fn(request_json), e.g. to echo a part of the prompt."""
    return Step(
        f"tool_answer_from({getattr(fn, '__name__', fn)})",
        lambda request, _: _tool_use(request, fn(request.json)),
    )


def malformed_tool_input(input_obj: Any) -> Step:
    """A tool-use message whose input is `input_obj` as given (no "english", not a string...)."""
    return Step(
        f"malformed_tool_input({input_obj!r})",
        lambda request, _: _message(
            request,
            [_tool_use_block(request, input_obj)],
            stop_reason="tool_use",
        ),
    )


def text_only(text: str) -> Step:
    """A message with a text block and no tool call."""
    return Step(
        f"text_only({text!r})",
        lambda request, _: _message(
            request, [{"type": "text", "text": text}], stop_reason="end_turn"
        ),
    )


def status(code: int, body: Any = None, headers: dict[str, str] | None = None) -> Step:
    """An HTTP error (or any status). Without a body, an Anthropic-style error JSON.

    A dict or list body is sent as JSON; str or bytes as given, as text/plain unless `headers`
    names another content-type.
    """
    if body is None:
        body = error_body(code, f"fake Anthropic API answered {code}")
    if isinstance(body, dict | list):
        payload, content_type = json.dumps(body).encode(), "application/json"
    else:
        payload = body.encode() if isinstance(body, str) else bytes(body)
        content_type = "text/plain; charset=utf-8"
    reply_headers = {"content-type": content_type, **(headers or {})}
    reply = Reply(code, payload, reply_headers)
    return Step(f"status({code})", lambda request, _: reply)


def raw(body_bytes: bytes, status: int = 200, content_type: str = "application/json") -> Step:
    """`body_bytes` as the body, verbatim (for bodies that are not JSON at all)."""
    reply = Reply(status, body_bytes, {"content-type": content_type})
    return Step(f"raw({body_bytes[:40]!r}, status={status})", lambda request, _: reply)


def delay(seconds: float, then: Step | None = None) -> Step:
    """Sleep `seconds` before answering with `then` (to run past the client's timeout).

    The wait ends early when the server stops, so a slow step never holds up the teardown.
    """
    follow = then if then is not None else tool_answer("(delayed answer)")

    def answer(request: RecordedRequest, stopping: threading.Event) -> Reply:
        stopping.wait(seconds)
        return follow.answer(request, stopping)

    return Step(f"delay({seconds}, then={follow.name})", answer)


def error_body(code: int, message: str) -> dict[str, Any]:
    """The error JSON the real API sends with a 4xx or 5xx."""
    error_type = _ERROR_TYPES.get(code, "api_error" if code >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _tool_name(request: RecordedRequest) -> str:
    """The tool the request forced, else its first tool, else the translator's tool name."""
    data = request.json if isinstance(request.json, dict) else {}
    choice = data.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("name"), str):
        return choice["name"]
    tools = data.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict):
        return str(tools[0].get("name", DEFAULT_TOOL_NAME))
    return DEFAULT_TOOL_NAME


def _tool_use_block(request: RecordedRequest, input_obj: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_fake{next(_ids):08d}",
        "name": _tool_name(request),
        "input": input_obj,
    }


def _tool_use(request: RecordedRequest, english: str) -> Reply:
    return _message(request, [_tool_use_block(request, {"english": english})], "tool_use")


def _message(request: RecordedRequest, content: list[Any], stop_reason: str) -> Reply:
    data = request.json if isinstance(request.json, dict) else {}
    body = {
        "id": f"msg_fake{next(_ids):08d}",
        "type": "message",
        "role": "assistant",
        "model": data.get("model") or "claude-fake",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            # Rough counts, for shape only.
            "input_tokens": max(1, len(request.body) // 4),
            "output_tokens": max(1, len(json.dumps(content)) // 4),
        },
    }
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


def _step_failed(step: Step, exc: Exception) -> Reply:
    body = error_body(500, f"fake Anthropic API: step {step.name} raised {exc!r}")
    return Reply(500, json.dumps(body).encode(), {"content-type": "application/json"})


SCRIPT_EXHAUSTED = status(500, error_body(500, "fake Anthropic API: script exhausted"))


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
                reply = _step_failed(step, exc)

        try:
            handler.send_response(reply.status)
            for name, value in {"request-id": f"req_fake{next(_ids):08d}", **reply.headers}.items():
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
