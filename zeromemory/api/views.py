"""Helpers shared by every API view."""

from __future__ import annotations

from rest_framework.request import Request

from scopes.access import Actor
from scopes.models import ApiToken


def actor_for(request: Request, *, surface: str = "api") -> Actor:
    token = request.auth if isinstance(request.auth, ApiToken) else None
    client = request.headers.get("User-Agent", "")[:120]
    return Actor(user=request.user, token=token, surface=surface, client_name=client)
