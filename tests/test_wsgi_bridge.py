"""zeromemory.core.wsgi_bridge: Django's WSGI answers as the ASGI server sends them: an ordinary
answer whole in one body message, a streaming one piece by piece; a body read on the loop when
its length is declared, through a2wsgi's reader otherwise (chunked)."""

from __future__ import annotations

import asyncio

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


def call(app, *, body: bytes, headers: list[tuple[bytes, bytes]], pieces: int = 1) -> list[dict]:
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
