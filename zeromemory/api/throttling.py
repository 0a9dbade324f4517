"""Rate limit per user (token or session), from settings.API_RATE."""

from __future__ import annotations

from rest_framework.throttling import UserRateThrottle


class ActorRateThrottle(UserRateThrottle):
    scope = "actor"
