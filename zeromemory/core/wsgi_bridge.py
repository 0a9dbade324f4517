"""Django (WSGI) behind the ASGI server, with as few crossings between the event loop and the
request's thread as an ordinary request allows.

a2wsgi, which this builds on, crosses from the thread to the loop and waits for it at every
step: to receive the body, to send the status, each piece of the body and its end. Each
crossing wakes the loop and parks the thread (profiles of recall put the loop and the hand-offs
at a fifth to two fifths of a read's CPU samples). Here, for a request whose body has a declared
length within `hold_bytes` (every API call, form and page):

- the loop reads the whole body before the thread starts;
- the thread runs Django and, for an ordinary (not streaming) response, hands the whole answer
  to the loop in one message that it does not wait for, then runs what the request deferred
  until after its answer (`zeromemory.core.after_answer`: the activity row) and closes the
  response (Django's request_finished: the thread's own connections) while the loop writes it.

Anything else (a larger or chunked body, an archive import; a streaming response: exports,
files) goes through a2wsgi's own body reader and sends each piece as a2wsgi does.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi.wsgi import Body, build_environ

from zeromemory.core import after_answer

# How long a request's thread waits for the loop to write its answer before it goes on with the
# request's deferred work and closes the response (the loop writes within a fraction of a
# millisecond unless the client stopped reading).
WRITE_WAIT_SECONDS = 0.05


def _declared_length(scope: dict) -> int | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


class WSGIBridge:
    """ASGI application running the WSGI `app` in a pool of `workers` threads."""

    def __init__(self, app, *, workers: int, hold_bytes: int) -> None:
        self.app = app
        self.hold_bytes = hold_bytes
        self.executor = ThreadPoolExecutor(thread_name_prefix="WSGI", max_workers=workers)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            message = await receive()
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
            assert message["type"] == "lifespan.shutdown"
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":  # websockets: none served here
            await send({"type": "websocket.close", "code": 1000})
            return
        loop = asyncio.get_running_loop()
        length = _declared_length(scope)
        if length is not None and length <= self.hold_bytes:
            chunks, more = [], length > 0
            while more:
                message = await receive()
                if message["type"] != "http.request":  # the client went away
                    return
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
            body: Any = io.BytesIO(b"".join(chunks))
        else:
            body = Body(loop, receive)
        environ = build_environ(scope, body)
        sent = loop.create_future()
        call = _Call(self.app, loop, send, sent)
        context = contextvars.copy_context()
        try:
            await loop.run_in_executor(self.executor, context.run, call.run, environ)
        except BaseException:
            sent.cancel()
            raise
        await sent  # the answer written (or its error raised)


class _Call:
    """One request's run in a thread, and how its answer reaches the loop."""

    def __init__(self, app, loop: asyncio.AbstractEventLoop, send, sent: asyncio.Future) -> None:
        self.app = app
        self.loop = loop
        self.send = send
        self.sent = sent
        self.start: dict[str, Any] | None = None
        self.streamed = False
        self.sending: asyncio.Task | None = None
        # Set once the loop has written a whole answer (or failed to): what the thread does
        # after the answer (deferred work, closing) waits for it, so that its Python never holds
        # the interpreter the loop writes with.
        self.written = threading.Event()

    def start_response(self, status: str, headers: list, exc_info=None):
        if exc_info is not None and self.streamed:
            raise exc_info[1].with_traceback(exc_info[2])
        code = int(status.split(" ", 1)[0])
        self.start = {
            "type": "http.response.start",
            "status": code,
            "headers": [
                (name.strip().encode("latin1").lower(), value.strip().encode("latin1"))
                for name, value in headers
            ],
        }
        return self._write

    def _write(self, chunk: bytes) -> None:  # WSGI's write(): streamed as it comes
        self._stream({"type": "http.response.body", "body": chunk, "more_body": True})

    def _stream(self, message: dict) -> None:
        """Send one message and wait until the loop sent it (a streaming answer's pace)."""
        if not self.streamed:
            self.streamed = True
            assert self.start is not None
            asyncio.run_coroutine_threadsafe(self.send(self.start), self.loop).result()
        asyncio.run_coroutine_threadsafe(self.send(message), self.loop).result()

    async def _send_whole(self, body: bytes) -> None:
        try:
            await self.send(self.start)
            await self.send({"type": "http.response.body", "body": body})
        except BaseException as error:  # handed to the request's coroutine, which raises it
            if not self.sent.done():
                self.sent.set_exception(error)
        else:
            if not self.sent.done():
                self.sent.set_result(None)
        finally:
            self.written.set()

    def _begin_sending(self, body: bytes) -> None:
        self.sending = self.loop.create_task(self._send_whole(body))  # kept: tasks are weak

    def _settle(self) -> None:
        if not self.sent.done():
            self.sent.set_result(None)

    def run(self, environ: dict) -> None:
        deferred = after_answer.collect()
        response, handed = None, False
        try:
            response = self.app(environ, self.start_response)
            if getattr(response, "streaming", True) or self.start is None:
                for chunk in response:
                    self._stream({"type": "http.response.body", "body": chunk, "more_body": True})
                self._stream({"type": "http.response.body", "body": b""})
                self.loop.call_soon_threadsafe(self._settle)
            else:
                body = b"".join(response)
                # Not waited for: the loop writes the answer while this thread does what the
                # request left for after it (its activity row), closes the response (Django's
                # request_finished) and is free for the next request.
                self.loop.call_soon_threadsafe(self._begin_sending, body)
                handed = True
        finally:
            if handed:  # the loop writes first: closing is Python too (request_finished)
                self.written.wait(WRITE_WAIT_SECONDS)
            if deferred:
                after_answer.run(deferred)
            if response is not None:
                getattr(response, "close", lambda: None)()
