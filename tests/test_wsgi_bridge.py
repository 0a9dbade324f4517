"""zeromemory.core.wsgi_bridge: Django's WSGI answers as the ASGI server sends them: an ordinary
answer whole in one body message, a streaming one piece by piece; a body read on the loop when
its length is declared, through a2wsgi's reader otherwise (chunked); the work a request defers
(zeromemory.core.after_answer) run once its answer is written, before the response is closed."""

from __future__ import annotations

import asyncio

from zeromemory.core import after_answer
from zeromemory.core.wsgi_bridge import WSGIBridge


class Whole(list):
    """An ordinary answer, as Django's HttpResponse is: not streaming."""

    streaming = False
    closed = False

    def close(self) -> None:
        self.closed = True


def echo(environ, start_response):
    body = environ["wsgi.input"].read()
    start_response("201 Created", [("Content-Type", "text/plain"), ("X-Length", str(len(body)))])
    return Whole([b"got ", body])


def stream(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    yield b"one "
    yield b"two"


def call(
    app,
    *,
    body: bytes,
    headers: list[tuple[bytes, bytes]],
    pieces: int = 1,
    events: list[str] | None = None,
) -> list[dict]:
    async def run() -> list[dict]:
        bridge = WSGIBridge(app, workers=2, hold_bytes=1024)
        size = max(1, len(body) // pieces)
        parts = [body[i : i + size] for i in range(0, len(body), size)] or [b""]
        incoming = [
            {"type": "http.request", "body": part, "more_body": n < len(parts) - 1}
            for n, part in enumerate(parts)
        ]
        sent: list[dict] = []

        async def receive():
            return incoming.pop(0)

        async def send(message):
            sent.append(message)
            if events is not None:
                events.append(message["type"])

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/x",
            "query_string": b"",
            "http_version": "1.1",
            "headers": headers,
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 5000),
        }
        await bridge(scope, receive, send)
        bridge.executor.shutdown()
        return sent

    return asyncio.run(run())


def test_an_ordinary_answer_goes_whole_in_one_message():
    body = b'{"query": "logs"}'
    sent = call(echo, body=body, headers=[(b"content-length", str(len(body)).encode())], pieces=3)
    start, whole = sent
    assert start["type"] == "http.response.start" and start["status"] == 201
    assert (b"x-length", str(len(body)).encode()) in start["headers"]
    assert whole == {"type": "http.response.body", "body": b"got " + body}


def test_a_chunked_body_is_read_through_the_stream():
    body = b"x" * 3000  # over hold_bytes, and no declared length
    sent = call(echo, body=body, headers=[(b"transfer-encoding", b"chunked")], pieces=4)
    assert sent[0]["status"] == 201
    assert b"".join(m.get("body", b"") for m in sent[1:]) == b"got " + body


def test_a_streaming_answer_goes_piece_by_piece():
    sent = call(stream, body=b"", headers=[(b"content-length", b"0")])
    assert [m["type"] for m in sent] == ["http.response.start"] + ["http.response.body"] * 3
    assert [m["body"] for m in sent[1:]] == [b"one ", b"two", b""]
    assert [m.get("more_body", False) for m in sent[1:]] == [True, True, False]


class Logged(Whole):
    """An ordinary answer whose close is written down."""

    def __init__(self, chunks: list[bytes], events: list[str]) -> None:
        super().__init__(chunks)
        self.events = events

    def close(self) -> None:
        self.events.append("closed")


def test_deferred_work_runs_after_the_answer_is_written_and_before_the_response_closes():
    events: list[str] = []

    def app(environ, start_response):
        after_answer.defer(lambda: events.append("first deferred"))
        after_answer.defer(lambda: 1 / 0)  # logged; the rest still runs
        after_answer.defer(lambda: events.append("second deferred"))
        events.append("answered")
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Logged([b"done"], events)

    sent = call(app, body=b"", headers=[(b"content-length", b"0")], events=events)
    assert sent[1] == {"type": "http.response.body", "body": b"done"}
    assert events == [
        "answered",
        "http.response.start",
        "http.response.body",
        "first deferred",
        "second deferred",
        "closed",
    ]
    assert after_answer.settled(timeout=0)  # nothing left outstanding


def test_outside_the_bridge_deferred_work_runs_at_once():
    done: list[str] = []
    after_answer.defer(lambda: done.append("now"))
    assert done == ["now"]
