"""Who is acting and through which surface: the user, the token they used (if any), the client.

Every service, selector and recall function takes an Actor; `scopes.access` decides what it may
touch. `actor_for_request` builds one for a DRF request (a bearer token or the session).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import models
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


class Surface(models.TextChoices):
    API = "api", _("API")
    MCP = "mcp", _("MCP")
    DASHBOARD = "dashboard", _("Dashboard")
    CAPTURE = "capture", _("Capture")


# The session key holding when the signed-in person last gave their password (epoch seconds):
# set on sign-in and by the dashboard's password confirmation.
PASSWORD_CHECKED_AT = "zm_password_checked_at"  # noqa: S105 (a session key)


def note_password_checked(session: Any) -> None:
    session[PASSWORD_CHECKED_AT] = time.time()


def session_password_checked_at(request: Any) -> float | None:
    """When the person signed in to this request's session last gave their password."""
    session = getattr(request, "session", None)
    value = session.get(PASSWORD_CHECKED_AT) if session is not None else None
    return float(value) if isinstance(value, int | float) else None


# Authority ranks, for hygiene's decisions: a person (a session) outranks an agent (a token),
# an agent outranks capture (extraction, import, the watcher).
HUMAN_RANK, AGENT_RANK, CAPTURE_RANK = 2, 1, 0


@dataclass(frozen=True)
class Actor:
    """A user, the API token they used (None for a session), the surface and the client name."""

    user: AbstractBaseUser
    token: Any = None  # a scopes.models.ApiToken; core imports no app
    surface: str = Surface.API
    client_name: str = field(default="")
    # The agent's conversation (session) this call belongs to, when the caller named one: the
    # activity row keeps it, and the session receipt counts by it.
    conversation_id: str = field(default="")
    # For a signed-in person (no token): when they last gave their password in this session.
    password_checked_at: float | None = field(default=None)

    @property
    def read_only(self) -> bool:
        return self.token is not None and self.token.read_only

    @property
    def scope_restricted(self) -> bool:
        return self.token is not None and self.token.scope_restricted


def actor_for_request(request: Any, *, surface: str = Surface.API) -> Actor:
    """The actor of a DRF request: `request.auth` is the ApiToken for a bearer token, else None."""
    client = request.headers.get("User-Agent", "")[:120]
    return Actor(
        user=request.user,
        token=request.auth,
        surface=surface,
        client_name=client,
        password_checked_at=(
            session_password_checked_at(request) if request.auth is None else None
        ),
    )
