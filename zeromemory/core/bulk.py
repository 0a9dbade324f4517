"""Bulk requests in processes of their own, so that their Python never holds the interpreter an
interactive request of a web process needs.

A web process serves each request in a thread of its own, and all its threads share one
interpreter. A batch of a hundred memories builds its rows and statements in Python for a
tenth of a second at a time; a recall that the kernel had placed in the same process waited for
it, whatever the batch's niceness or its giving way between steps (which only bound waits
between steps). `manage.py serve` therefore starts ZM_BULK_PROCESSES processes of the same
application on a listening socket of their own (127.0.0.1, a port the kernel picks), in a
session at ZM_BULK_NICE, and tells the web processes its port (ZM_BULK_PORT). A web process's
event loop hands each bulk request (`BULK_ROUTE`: a batch of memories, an archive import) to
them as it came, over HTTP/1.1 (h11 frames it), its body streamed through, and streams their
answer back: the same routes, checks and answers, served by another interpreter. The
client's address is not handed over (the bulk process sees 127.0.0.1); the headers are, so
that behind ZM_PROXY_COUNT proxies it reads the same forwarded address. Where no bulk process
takes the connection (none configured: nothing listens on the port), the web process serves
the request itself, as it always did. `serve` holds the bulk socket open, so while a bulk
process restarts, the requests handed to it wait in the socket's queue for the new one. One that
fails after taking the request is answered 502, since the write may have happened (a retry with
the same idempotency keys is answered from their records).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re

import h11
from django.utils.translation import gettext as _

from zeromemory.core.errors import error_body

logger = logging.getLogger(__name__)

# An archive import and an import from another system (REST and dashboard).
ARCHIVE_IMPORT = re.compile(
    r"(/api/v1/scopes/[^/]+/(import-export|import-from/[^/]+)|/scopes/[^/]+/import-from)/?"
)
# POST only: a batch of memories, and the archive imports.
BULK_ROUTE = re.compile(r"/api/v1/memories/batch/?|" + ARCHIVE_IMPORT.pattern)
# Headers about one connection, not the request: each hop sets its own.
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"expect",  # the client's 100-continue was answered by the web process
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)
# Of the bulk process's answer, also its Date: the web process's server dates the answer itself.
ANSWER_DROPPED = HOP_BY_HOP | {b"date"}
READ_BYTES = 65_536


def is_bulk(scope: dict) -> bool:
    return scope["method"] == "POST" and BULK_ROUTE.fullmatch(scope["path"]) is not None


class BulkRouting:
    """ASGI middleware of a web process: bulk requests to the bulk processes on `port` of
    127.0.0.1, everything else (and everything when `port` is None) to `app`."""

    def __init__(self, app, *, port: int | None) -> None:
        self.app = app
        self.port = port

    async def __call__(self, scope, receive, send) -> None:
        if self.port is None or scope["type"] != "http" or not is_bulk(scope):
            await self.app(scope, receive, send)
            return
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:  # nothing listens on the port: served here
            await self.app(scope, receive, send)
            return
        try:
            await _forward(scope, receive, send, reader, writer)
        finally:
            writer.close()


def _request(scope: dict) -> h11.Request:
    headers = [(k, v) for k, v in scope["headers"] if k.lower() not in HOP_BY_HOP]
    names = {k.lower() for k, _ in headers}
    if b"host" not in names:  # an HTTP/1.0 client's request: the address it reached
        host, port = scope.get("server") or ("127.0.0.1", 80)
        headers.append((b"host", f"{host}:{port}".encode()))
    if b"content-length" not in names:  # a chunked body stays chunked
        headers.append((b"transfer-encoding", b"chunked"))
    headers.append((b"connection", b"close"))
    target = scope.get("raw_path") or scope["path"].encode()
    if scope.get("query_string"):
        target += b"?" + scope["query_string"]
    return h11.Request(method=scope["method"], target=target, headers=headers)


async def _forward(scope, receive, send, reader, writer) -> None:
    """The request to the bulk process and its answer back; a 502 if it fails before
    answering."""
    connection = h11.Connection(our_role=h11.CLIENT)
    answered = False
    try:
        writer.write(connection.send(_request(scope)))
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: so does the request
                return
            if message.get("body"):
                writer.write(connection.send(h11.Data(data=message["body"])))
                await writer.drain()
            more = message.get("more_body", False)
        writer.write(connection.send(h11.EndOfMessage()))
        await writer.drain()
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await reader.read(READ_BYTES))
            elif isinstance(event, h11.Response):
                headers = [(k, v) for k, v in event.headers if k not in ANSWER_DROPPED]
                start = {"type": "http.response.start", "status": event.status_code}
                await send({**start, "headers": headers})
                answered = True
            elif isinstance(event, h11.Data):
                body = {"type": "http.response.body", "body": bytes(event.data)}
                await send({**body, "more_body": True})
            elif isinstance(event, h11.EndOfMessage):
                await send({"type": "http.response.body", "body": b""})
                return
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionResetError("the bulk process closed the connection")
            # an informational answer (100 Continue) is the hop's own
    except (OSError, h11.ProtocolError) as error:
        logger.error("a bulk request to %s failed: %s", scope["path"], error)
        if not answered:
            await _bad_gateway(send)


async def _bad_gateway(send) -> None:
    message = _(
        "The process serving bulk requests ended before it answered; the request may have been "
        "carried out. Retry it with the same idempotency keys."
    )
    body = json.dumps(error_body("bulk_unavailable", message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 502, "headers": headers})
    await send({"type": "http.response.body", "body": body})
