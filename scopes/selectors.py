"""Reads for tenancy. Scope lookups themselves live in `scopes.access`."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from scopes.access import require_account_access
from scopes.models import ApiToken, Membership, Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound


def scope_members(*, scope: Scope) -> QuerySet[Membership]:
    return Membership.objects.filter(scope=scope).select_related("user").order_by("-role", "id")


def own_tokens(*, actor: Actor) -> QuerySet[ApiToken]:
    require_account_access(actor)
    return ApiToken.objects.filter(user=actor.user).prefetch_related("restricted_scopes")


def own_token(*, actor: Actor, public_id: str) -> ApiToken:
    token = own_tokens(actor=actor).filter(public_id=public_id).first()
    if token is None:
        raise NotFound(_("No token with id %(id)s.") % {"id": public_id})
    return token
