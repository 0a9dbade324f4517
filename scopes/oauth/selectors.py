"""Reads of the authorization server: the API token an OAuth access token acts as."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import AccessToken

from scopes.models import ApiToken
from scopes.oauth.models import OAuthGrant
from scopes.oauth.resources import bound_to
from scopes.services import token_touch
from zeromemory.core.actor import Actor


class InsufficientScope(Exception):
    """A valid token for this resource whose OAuth scope does not cover reading it."""


def token_for_access_token(secret: str, *, resource: str) -> ApiToken | None:
    """The grant's API token for a live OAuth access token bound to `resource`, else None
    (unknown, expired, revoked, for another resource, or its grant's user is inactive)."""
    checksum = hashlib.sha256(secret.encode("utf-8")).hexdigest()
    row = (
        AccessToken.objects.filter(token_checksum=checksum, expires__gt=timezone.now())
        .values("resource", "scope", "refresh_token__token_family")
        .first()
    )
    if row is None or not bound_to(row["resource"], resource):
        return None
    grant = active_grant(row["refresh_token__token_family"])
    if grant is None:
        return None
    if settings.OAUTH_SCOPE_READ not in row["scope"].split():
        raise InsufficientScope
    token_touch(token=grant.token)
    return grant.token


def active_grant(token_family) -> OAuthGrant | None:
    """The grant of a refresh-token family, unless it is revoked or its user is inactive."""
    if token_family is None:
        return None
    grant = OAuthGrant.objects.select_related("token__user").filter(token_family=token_family)
    grant = grant.first()
    if grant is None or not grant.token.is_active() or not grant.token.user.is_active:
        return None
    return grant


def own_grants(*, actor: Actor):
    """The person's grants to OAuth clients, newest first, with their tokens and scopes."""
    return (
        OAuthGrant.objects.filter(token__user=actor.user, token_family__isnull=False)
        .select_related("token", "application")
        .prefetch_related("token__restricted_scopes")
        .order_by("-created_at")
    )
