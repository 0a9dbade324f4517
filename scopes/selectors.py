"""Reads for tenancy. Scope lookups themselves live in `scopes.access`."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from scopes import access
from scopes.access import require_account_access
from scopes.models import ApiToken, Membership, Role, Scope
from scopes.schemas import ScopeOut
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound


def _answer(actor: Actor, scope: Scope, role: int | None) -> ScopeOut:
    return ScopeOut(
        id=scope.public_id,
        kind=scope.kind,
        name=scope.name,
        slug=scope.slug,
        owner=scope.owner.get_username(),
        role=Role(role).slug if role is not None else None,
        writable=access.writes_with_role(actor, role),
        created_at=scope.created_at,
    )


def scope_answers(*, actor: Actor, scopes: list[Scope]) -> list[ScopeOut]:
    """Scopes the actor can read (obtained through `scopes.access`), with its role in each."""
    roles = access.roles_in(actor, scopes)
    return [_answer(actor, scope, roles.get(scope.id)) for scope in scopes]


def readable_scope_answers(*, actor: Actor) -> list[ScopeOut]:
    """Every scope the actor can read, with its role: one query."""
    scopes = access.readable_scopes_with_own_role(actor).select_related("owner")
    return [_answer(actor, scope, scope.my_role) for scope in scopes]


def scope_members(*, scope: Scope) -> QuerySet[Membership]:
    return Membership.objects.filter(scope=scope).select_related("user").order_by("-role", "id")


def own_tokens(*, actor: Actor) -> QuerySet[ApiToken]:
    """The person's tokens. The token behind an OAuth consent whose code was never exchanged is
    left out: no secret of it ever reached anybody, so it is nothing the person holds."""
    require_account_access(actor)
    return (
        ApiToken.objects.filter(user=actor.user)
        .exclude(oauth_grant__isnull=False, oauth_grant__token_family__isnull=True)
        .prefetch_related("restricted_scopes")
    )


def own_token(*, actor: Actor, public_id: str) -> ApiToken:
    token = own_tokens(actor=actor).filter(public_id=public_id).first()
    if token is None:
        raise NotFound(_("No token with id %(id)s.") % {"id": public_id})
    return token
