"""A single remember's model pass started while its request is still being authenticated.

A single remember spent about two milliseconds before its pass began: the bearer's lookup, the
throttle, parsing and validating the body. The pass does not need any of it, only the text, so
for a bearer this process saw pass every check a short while ago (`SEEN_SECONDS`) the pass
starts on the body's `content` as soon as the view is reached, on the other core, while this
thread authenticates. The request's checks run as before and decide everything: the service uses
the started pass only when the text it would embed is the same (`EmbeddedAhead.embeds`), and a
request refused anywhere has its pass dropped, never stored or answered.

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

from django.conf import settings
from rest_framework.request import Request

from memories.canonical.content import clean_content
from memories.embeddings import EmbeddedAhead
from zeromemory.core.errors import DomainError

SEEN_SECONDS = 60.0
SEEN_BEARERS = 4096

_seen: OrderedDict[bytes, float] = OrderedDict()
_lock = threading.Lock()


def bearer(request: Request) -> bytes | None:
    """The key the request's bearer is known by here (its header's SHA-256), or None."""
    header = request._request.META.get("HTTP_AUTHORIZATION", "")
    if header[:7].lower() != "bearer ":
        return None
    return hashlib.sha256(header.encode("utf-8", "surrogatepass")).digest()


def started(request: Request, *, key: bytes) -> EmbeddedAhead | None:
    """The pass of the body's text, started for a bearer seen passing every check in the last
    SEEN_SECONDS; else None (then the service starts it after the checks, as always)."""
    with _lock:
        seen_at = _seen.get(key)
    if seen_at is None or time.monotonic() - seen_at > SEEN_SECONDS:
        return None
    django_request = request._request
    if django_request.content_type != "application/json":
        return None
    try:
        # A body of a declared length within the limit only: reading it raises nothing then
        if not 0 < int(django_request.META.get("CONTENT_LENGTH") or 0) <= settings.MAX_BODY_BYTES:
            return None
        body = json.loads(django_request.body)
        text = clean_content(body.get("content") if isinstance(body, dict) else None)
        # What the body's validation refuses is not embedded: NUL, a lone surrogate (raises
        # UnicodeEncodeError, a ValueError).
        if "\x00" in text or not text.encode("utf-8"):
            return None
    except (ValueError, RecursionError, DomainError, OSError):  # the view will say why
        return None
    return EmbeddedAhead([text])


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
