"""The model's pass of a request started while the request is still being authenticated.

A single remember, a recall and a build_context spent about two milliseconds before their pass
began: the middleware, the bearer's lookup, the throttle, parsing and validating the body. The
pass needs none of it, only the text, so for a bearer this process saw pass every check a short
while ago (`SEEN_SECONDS`) the pass starts on the body's text in `EarlyPassMiddleware`, before
the rest of the middleware runs, on the other core, while this thread goes on. The request's
checks run as before and decide everything: the service uses the started pass only when the text
it would embed is the same one, and a request refused anywhere has its pass dropped, never stored
or answered.

An outsider cannot start a pass: only a bearer that passed authentication, permission and the
throttle here does, and only until SEEN_SECONDS after it last did; a bearer refused once (revoked,
expired, its user deactivated, over its rate) is forgotten at once, so it costs at most one pass
more. Only the header's SHA-256 is kept, for at most `SEEN_BEARERS` bearers per process.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.urls import Resolver404, resolve

from memories.canonical.content import clean_content
from memories.embeddings import EmbeddedAhead
from memories.recall import query_vector
from memories.recall.inputs import ReadRequest, validate_kinds
from zeromemory.core.errors import DomainError

SEEN_SECONDS = 60.0
SEEN_BEARERS = 4096

_seen: OrderedDict[bytes, float] = OrderedDict()
_lock = threading.Lock()


class Started(Protocol):
    def drop(self) -> None: ...


def bearer(request: HttpRequest) -> bytes | None:
    """The key the request's bearer is known by here (its header's SHA-256), or None."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header[:7].lower() != "bearer ":
        return None
    return hashlib.sha256(header.encode("utf-8", "surrogatepass")).digest()


def known(key: bytes) -> bool:
    """Whether the bearer passed every check here in the last SEEN_SECONDS."""
    with _lock:
        seen_at = _seen.get(key)
    return seen_at is not None and time.monotonic() - seen_at <= SEEN_SECONDS


def passed(*, key: bytes) -> None:
    """The bearer passed authentication, permission and the throttle."""
    with _lock:
        _seen[key] = time.monotonic()
        _seen.move_to_end(key)
        while len(_seen) > SEEN_BEARERS:
            _seen.popitem(last=False)


def refused(*, key: bytes) -> None:
    """The bearer was refused before the view ran: it starts no pass until it passes again."""
    with _lock:
        _seen.pop(key, None)


def body_of(request: HttpRequest) -> dict | None:
    """The JSON object of the body, or None; the view's own parsing says what is wrong."""
    if request.content_type != "application/json":
        return None
    try:
        # A body of a declared length within the limit only: reading it raises nothing then
        if not 0 < int(request.META.get("CONTENT_LENGTH") or 0) <= settings.MAX_BODY_BYTES:
            return None
        body = json.loads(request.body)
    except (ValueError, RecursionError, OSError):
        return None
    return body if isinstance(body, dict) else None


def remember_pass(request: HttpRequest) -> EmbeddedAhead | None:
    """A single remember's: the pass of its content as it would be stored, when its text could
    be (no NUL, no lone surrogate: what the body's validation refuses)."""
    body = body_of(request)
    content = body.get("content") if body is not None else None
    try:
        text = clean_content(content)
        text.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, a ValueError
    except (DomainError, ValueError):
        return None
    if "\x00" in text:
        return None
    return EmbeddedAhead([text])


def query_pass(model: type[ReadRequest], field: str):
    """A read's: the pass of its query (`field`) exactly as sent, once the arguments are valid
    by the read's own request model and its kinds known (what a refused read never runs)."""

    def started(request: HttpRequest) -> query_vector.QueryVector | None:
        body = body_of(request)
        if body is None:
            return None
        try:
            parsed = model.parse(body)
            validate_kinds(getattr(parsed, "kinds", None))
        except DomainError:
            return None
        return query_vector.begin(getattr(parsed, field))

    return started


def started_for(request: HttpRequest) -> Started | None:
    """The pass a POST starts before its checks: its view's (`EarlyPass.start`), for a bearer
    known here."""
    if request.method != "POST":
        return None
    key = bearer(request)
    if key is None or not known(key):
        return None
    start = _start_of(getattr(request, "urlconf", None) or settings.ROOT_URLCONF, request.path_info)
    return start(request) if start is not None else None


@lru_cache(maxsize=1024)
def _start_of(urlconf: str, path: str) -> Callable[[HttpRequest], Started | None] | None:
    """The `start` of the view a path routes to, if it has one (routing took 0.1 ms a call)."""
    try:
        view = resolve(path, urlconf).func
    except Resolver404:
        return None
    return getattr(getattr(view, "view_class", None), "start", None)


class EarlyPassMiddleware:
    """Starts a known bearer's pass (`started_for`) before the rest of the middleware and the
    view, in `request.early_pass`, and drops it once the request is answered, whether the
    service used it or not."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = started_for(request)
        if started is None:
            return self.get_response(request)
        request.early_pass = started
        try:
            return self.get_response(request)
        finally:
            started.drop()


# For an APIView: its POST's pass (`start`, one of the above), started by `EarlyPassMiddleware`
# for a known bearer, in `self.started` for the handler to hand to its service; its bearer kept
# as known when it passes DRF's checks, forgotten when they refuse it. (A comment, not a
# docstring: the API's schema takes a view's inherited docstring as its operation's
# description.)
class EarlyPass:
    start: Any = None  # staticmethod(remember_pass), staticmethod(query_pass(model, field))
    started: Started | None = None

    def initial(self, request, *args, **kwargs):
        key = bearer(request._request)
        if key is None:
            super().initial(request, *args, **kwargs)
            return
        self.started = getattr(request._request, "early_pass", None)
        try:
            super().initial(request, *args, **kwargs)
        except BaseException:
            refused(key=key)
            raise
        passed(key=key)
