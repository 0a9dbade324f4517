"""Rate limit per user (token or session), from settings.API_RATE, shared by every process.

The count lives in PostgreSQL, which every web process on every host already shares: one
statement per request counts the call in the user's current fixed window and returns the count,
atomically (two processes can never both take the last call of a window). The table is
UNLOGGED: a crash may forget the current windows, which only resets some counts. Per-process
memory (Django's default cache) would let N processes serve N times the rate; the database cache
would need several round trips and a read-modify-write per request.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

from django.conf import settings
from django.db import connection
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

_COUNT = """
INSERT INTO zm_rate_window AS w (key, window_start, hits) VALUES (%s, %s, 1)
ON CONFLICT (key) DO UPDATE SET
    hits = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.hits + 1 ELSE 1 END,
    window_start = EXCLUDED.window_start
RETURNING hits
"""


def parse_rate(rate: str) -> tuple[int, int] | tuple[None, None]:
    return SimpleRateThrottle.parse_rate(None, rate or None)


def count_in_window(key: str, duration: int) -> tuple[int, float]:
    """Count one hit for `key` in the current fixed window of `duration` seconds: the hits so
    far in it, and the seconds until it ends."""
    now = time.time()
    window = int(now // duration) * duration
    with connection.cursor() as cursor:
        cursor.execute(_COUNT, [key, window])
        hits = cursor.fetchone()[0]
    return hits, window + duration - now


def forget_windows(*, key: str) -> None:
    """Remove a key's window (when its user is deleted)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM zm_rate_window WHERE key = %s", [key])


def retry_after(user) -> float | None:
    """Count one call of an authenticated user against the rate: None when it is allowed, else
    the seconds until the next one is. The surfaces that are not DRF views (MCP,
    the dashboard's pages) call this; DRF views use ActorRateThrottle."""
    throttle = ActorRateThrottle()
    if throttle.allow_request(SimpleNamespace(user=user), None):
        return None
    return throttle.wait() or 1.0


class ActorRateThrottle(BaseThrottle):
    """At most N calls per window (second, minute, hour or day) per user, across processes."""

    def __init__(self) -> None:
        self._wait = 0.0

    def allow_request(self, request, view) -> bool:
        allowed, duration = parse_rate(settings.API_RATE)
        user = getattr(request, "user", None)
        if allowed is None or user is None or not user.is_authenticated:
            return True
        hits, self._wait = count_in_window(f"user:{user.pk}", duration)
        return hits <= allowed

    def wait(self) -> float:
        return self._wait
