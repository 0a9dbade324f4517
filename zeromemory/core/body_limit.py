"""Request bodies over the limit: a 413 with the error envelope that the sender can read.

A server that answers before it has read the body and then closes the connection leaves the
unread bytes in its socket; the kernel answers them with a reset, and the client, still sending,
sees a broken pipe instead of the answer. So a body over the limit is read to its end and
dropped (at most `DRAIN_BYTES` of it; past that the connection is closed, as any server would),
then answered. A client that asked `Expect: 100-continue` is answered at once: it sends nothing
more. A chunked body (no Content-Length) is held until it ends or passes the limit, so the
application behind never starts on a body it would have to refuse half-way; only bodies of the
ordinary limit are held, before anyone has signed in, never an archive import's.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.utils.translation import gettext as _

from zeromemory.core.errors import error_body

# What is read and dropped of a body over the limit before the connection is closed instead.
DRAIN_BYTES = 64 * 1_048_576


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class BodyLimit:
    """ASGI middleware: `limit_for(path)` is the largest body a path takes; a chunked body is
    held in memory only where that is at most `hold_at_most` bytes."""

    def __init__(self, app, limit_for: Callable[[str], int], *, hold_at_most: int) -> None:
        self.app = app
        self.limit_for = limit_for
        self.hold_at_most = hold_at_most

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        length = _header(scope, b"content-length")
        if length is not None:
            declared = int(length) if length.strip().isdigit() else 0
            if declared <= limit:
                await self.app(scope, receive, send)
                return
            expects = (_header(scope, b"expect") or "").lower() == "100-continue"
            drained = False
            if not expects and declared <= limit + DRAIN_BYTES:
                drained = await self._drain(receive, declared)
            await self._refuse(send, limit, close=not drained)
            return
        chunked = "chunked" in (_header(scope, b"transfer-encoding") or "").lower()
        if not chunked or limit > self.hold_at_most:
            # A route that takes more than what is held here (an archive import) reads its own
            # chunked body into a temporary file and refuses it past its limit.
            await self.app(scope, receive, send)
            return
        held, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            held.append(message.get("body", b""))
            size += len(held[-1])
            if size > limit:
                drained = not message.get("more_body") or await self._drain(
                    receive, limit + DRAIN_BYTES - size
                )
                await self._refuse(send, limit, close=not drained)
                return
            if not message.get("more_body"):
                break
        await self.app(scope, _replay(b"".join(held), receive), send)

    @staticmethod
    async def _drain(receive, budget: int) -> bool:
        """Read and drop the rest of the body, at most `budget` bytes: whether it all came."""
        while budget >= 0:
            message = await receive()
            if message["type"] != "http.request":
                return False
            budget -= len(message.get("body", b""))
            if not message.get("more_body"):
                return budget >= 0
        return False

    @staticmethod
    async def _refuse(send, limit: int, *, close: bool) -> None:
        message = _("The body is larger than %(n)d bytes.") % {"n": limit}
        body = json.dumps(error_body("validation_failed", message, {"body": [message]})).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]
        if close:
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _replay(body: bytes, receive):
    """A `receive` that gives the held body once, then the client's own messages."""
    sent = False

    async def replayed():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
