"""Single-use download URLs for an export (the MCP tool `export_memories` answers one).

The URL carries a value signed with the server's secret key that names a ticket row; the row
binds it to the user, the token the tool was called with and the scopes, and records its use,
so it works once and only until it expires. When it is used, the scopes are asked of the access
module again: a user removed from a scope, or a revoked token, downloads nothing of it.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.models import ExportTicket
from scopes.access import administrable_scopes
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound

SALT = "zero-memory.export-ticket"


def ticket_issue(*, actor: Actor, scopes: list[Scope]) -> tuple[ExportTicket, str]:
    """A ticket for these scopes (obtained through the access module) and its signed value."""
    ticket = ExportTicket.objects.create(
        user=actor.user,
        token=actor.token,
        scopes=sorted(scope.public_id for scope in scopes),
        expires_at=timezone.now() + timedelta(seconds=settings.EXPORT_URL_SECONDS),
    )
    return ticket, signing.dumps(ticket.public_id, salt=SALT)


def ticket_redeem(*, signed: str) -> tuple[Actor, list[Scope]]:
    """Use a ticket once: the actor it was issued to and the scopes it may still export."""
    gone = NotFound(_("This download link is not valid, was used already or has expired."))
    try:
        public_id = signing.loads(signed, salt=SALT, max_age=settings.EXPORT_URL_SECONDS)
    except signing.BadSignature:
        raise gone from None
    now = timezone.now()
    used = ExportTicket.objects.filter(
        public_id=public_id, used_at__isnull=True, expires_at__gt=now
    ).update(used_at=now)
    if not used:
        raise gone
    ticket = ExportTicket.objects.select_related("user", "token").get(public_id=public_id)
    actor = Actor(user=ticket.user, token=ticket.token)
    scopes = list(administrable_scopes(actor).filter(public_id__in=ticket.scopes))
    if not scopes:
        raise gone
    return actor, scopes
