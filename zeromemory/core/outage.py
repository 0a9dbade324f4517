"""Database outages: one answer on every surface, one log line when one starts and one when it ends.

While the database cannot be reached, every surface answers 503 with the stable code
`unavailable` and a Retry-After header (MCP tools: a tool error with that code), never 500 with a
traceback per request. The first failure of an outage logs one line; the first connection that
succeeds afterwards logs that it is over. Nothing needs restarting: each request opens its
connection again (Django drops a broken one at the end of the request).

A failure is an outage when the database error came with a lost connection (refused, reset,
server shut down), or when its SQLSTATE says the connection is lost or the server is going down
or starting up, whatever the driver still reports for the connection: a server terminating a
backend raises before the driver has seen the socket close, and PgBouncer keeps its client's
connection open while it answers `server conn crashed?` for a primary that restarts. A statement
error on a working connection (a deadlock, a timeout, a constraint) is not.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django.db import (
    DEFAULT_DB_ALIAS,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connections,
)
from django.db.backends.signals import connection_created
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext as _

from zeromemory.core import routing
from zeromemory.core.errors import DomainError, error_body

logger = logging.getLogger("zeromemory.outage")

RETRY_AFTER_SECONDS = 5

_lock = threading.Lock()
_down_since: float | None = None


class Unavailable(DomainError):
    code = "unavailable"
    status = 503


def _connection_lost(alias: str) -> bool:
    raw = connections[alias].connection
    return raw is None or bool(getattr(raw, "closed", False)) or bool(getattr(raw, "broken", False))


# Class 08 is "connection exception" (PgBouncer's own errors are 08P01); 57P01, 57P02 and 57P03
# are an administrator's or a crash's shutdown and "the database system is starting up" or
# "shutting down"; 53300 is a server out of connection slots.
LOST_CONNECTION_CLASS = "08"
SERVER_GOING_OR_COMING = {"57P01", "57P02", "57P03", "53300"}


# What a lost connection raises: Django's wrappers, or the driver's own errors where nothing
# wrapped them.
CONNECTION_ERRORS = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)


def _database_errors(exc: BaseException) -> Iterator[BaseException]:
    """The connection-level errors in the exception's chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, CONNECTION_ERRORS):
            yield seen
        seen = seen.__cause__ or seen.__context__


def _says_connection_lost(exc: BaseException) -> bool:
    for error in _database_errors(exc):
        state = getattr(error, "sqlstate", None) or ""
        if state.startswith(LOST_CONNECTION_CLASS) or state in SERVER_GOING_OR_COMING:
            return True
    return False


def _is_outage(exc: BaseException, alias: str) -> bool:
    return next(_database_errors(exc), None) is not None and _connection_lost(alias)


def unavailable(exc: BaseException, *, alias: str = DEFAULT_DB_ALIAS) -> Unavailable | None:
    """The `Unavailable` error for a database outage (and note the outage), else None.

    Call it in the thread that ran the query: it looks at that thread's connection."""
    if isinstance(exc, Unavailable):
        return exc
    if _is_outage(exc, alias):
        _outage_started(exc)
    elif replica := next((a for a in routing.replicas_in_use() if _is_outage(exc, a)), None):
        # a replica lost under a read: this request fails, the next ones read the primary
        routing.mark_down(replica, exc)
    elif _says_connection_lost(exc):
        # The connection may still look usable (PgBouncer keeps it open): drop it when the
        # request ends, so the next one connects afresh and the outage's end is noticed.
        connections[alias].close_at = time.monotonic()
        _outage_started(exc)
    else:
        return None
    return Unavailable(
        _("The database is unavailable; try again in a few seconds."),
        details={"retry_after": RETRY_AFTER_SECONDS},
    )


@contextmanager
def orm_call() -> Iterator[None]:
    """ORM work outside a Django request (an MCP call, its token lookup), run like one: stale
    connections dropped before and after, and a lost database raised as `Unavailable`."""
    close_old_connections()
    try:
        yield
    except Exception as exc:
        outage = unavailable(exc)  # judged here, in the thread whose connection failed
        if outage is not None:
            raise outage from None
        raise
    finally:
        close_old_connections()


def _outage_started(exc: BaseException) -> None:
    global _down_since
    with _lock:
        if _down_since is not None:
            return
        _down_since = time.monotonic()
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    logger.error("database unavailable, answering 503 until it is back: %s", reason[:300])


def _connection_created(sender, connection, **kwargs) -> None:
    global _down_since
    if _down_since is None:
        return
    with _lock:
        since, _down_since = _down_since, None
    if since is not None:
        logger.warning("database available again after %.0f s", time.monotonic() - since)


connection_created.connect(_connection_created, dispatch_uid="zeromemory.outage")


def retry_headers() -> dict[str, str]:
    return {"Retry-After": str(RETRY_AFTER_SECONDS)}


def response_for(request: HttpRequest, error: Unavailable) -> HttpResponse:
    """The 503 answer: the error envelope under /api/ and /mcp, a plain page elsewhere."""

    if request.path.startswith(("/api/", "/mcp")):
        body = error_body(error.code, error.message, error.details)
        response: HttpResponse = JsonResponse(body, status=error.status)
    else:
        html = render_to_string("503.html", {"retry_after": RETRY_AFTER_SECONDS}, request=None)
        response = HttpResponse(html, status=error.status)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    response._has_been_logged = True  # the outage's one line says it; not one per request
    return response


class DatabaseOutageMiddleware:
    """A view that failed because the database is gone answers 503 instead of 500."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        error = unavailable(exception)
        return response_for(request, error) if error is not None else None


def response_for_current_exception(request: HttpRequest) -> HttpResponse | None:
    """For handler500: the 503 answer when the exception being handled is an outage."""
    exc = sys.exc_info()[1]
    error = unavailable(exc) if exc is not None else None
    return response_for(request, error) if error is not None else None
