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
from dataclasses import dataclass
from types import SimpleNamespace

from django.conf import settings
from django.db import connection
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

# One hit in a key's window, its rows (`{rows}`: the key, the window's start, 1) given by the
# caller: a VALUES row here, the token's user in authentication's statement.
COUNT_ROWS = """
INSERT INTO zm_rate_window AS w (key, window_start, hits) {rows}
ON CONFLICT (key) DO UPDATE SET
    hits = CASE WHEN w.window_start = EXCLUDED.window_start THEN w.hits + 1 ELSE 1 END,
    window_start = EXCLUDED.window_start
RETURNING hits
"""
_COUNT = COUNT_ROWS.format(rows="VALUES (%s, %s, 1)")
# The key of a user's window; authentication's statement writes it as this prefix and the id.
USER_KEY_PREFIX = "user:"


def parse_rate(rate: str) -> tuple[int, int] | tuple[None, None]:
    return SimpleRateThrottle.parse_rate(None, rate or None)


@dataclass(frozen=True)
class Window:
    """The current fixed window of `duration` seconds: its start, and the seconds left in it."""

    start: int
    left: float

    @classmethod
    def now(cls, duration: int) -> Window:
        now = time.time()
        start = int(now // duration) * duration
        return cls(start, start + duration - now)


def api_window() -> Window | None:
    """The current window of the API's rate, or None without a rate (ZM_API_RATE empty)."""
    allowed, duration = parse_rate(settings.API_RATE)
    return None if allowed is None else Window.now(duration)


def count_in_window(key: str, duration: int) -> tuple[int, float]:
    """Count one hit for `key` in the current fixed window of `duration` seconds: the hits so
    far in it, and the seconds until it ends."""
    window = Window.now(duration)
    with connection.cursor() as cursor:
        cursor.execute(_COUNT, [key, window.start])
        hits = cursor.fetchone()[0]
    return hits, window.left


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
        # A bearer token's call was counted by the statement that found the token
        # (`scopes.authentication`): one round trip for both.
        counted = getattr(getattr(request, "auth", None), "counted_call", None)
        if counted is not None:
            hits, self._wait = counted
        else:
            hits, self._wait = count_in_window(f"{USER_KEY_PREFIX}{user.pk}", duration)
        return hits <= allowed

    def wait(self) -> float:
        return self._wait
