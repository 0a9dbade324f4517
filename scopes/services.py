"""Writes for tenancy: scopes, memberships and API tokens."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from scopes.access import (
    Actor,
    readable_scope,
    require_account_access,
    require_write_access,
)
from scopes.erasure import erase_scope
from scopes.models import ApiToken, Membership, Role, Scope, ScopeKind, slug_validator
from zeromemory.core.errors import ConflictError, NotFound, ValidationFailed
from zeromemory.core.secrets import refuse_secrets

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

TOKEN_PREFIX = "zm_"  # noqa: S105 - a public prefix, not a secret


def _check_slug(slug: str) -> None:
    try:
        slug_validator(slug)
    except DjangoValidationError as exc:
        raise ValidationFailed("slug", str(exc.messages[0])) from None


def scope_create_personal(*, user: AbstractBaseUser) -> Scope:
    scope = Scope.objects.create(
        kind=ScopeKind.PERSONAL, name="Personal", slug="personal", owner=user
    )
    Membership.objects.create(scope=scope, user=user, role=Role.ADMIN)
    return scope


def scope_create(*, actor: Actor, name: str, slug: str, kind: str) -> Scope:
    require_write_access(actor)
    require_account_access(actor)
    if kind not in (ScopeKind.TEAM, ScopeKind.PROJECT):
        raise ValidationFailed("kind", _("Kind must be team or project."))
    refuse_secrets({"name": name, "slug": slug})
    _check_slug(slug)
    try:
        with transaction.atomic():
            scope = Scope.objects.create(kind=kind, name=name, slug=slug, owner=actor.user)
            Membership.objects.create(scope=scope, user=actor.user, role=Role.ADMIN)
    except IntegrityError:
        raise ConflictError(
            _("You already own a scope with the slug %(slug)s.") % {"slug": slug},
            details={"slug": [_("Already in use.")]},
        ) from None
    return scope


def scope_update(*, scope: Scope, name: str | None = None, slug: str | None = None) -> Scope:
    refuse_secrets({"name": name, "slug": slug})
    fields = []
    if name is not None:
        scope.name = name
        fields.append("name")
    if slug is not None:
        _check_slug(slug)
        scope.slug = slug
        fields.append("slug")
    if fields:
        try:
            with transaction.atomic():
                scope.save(update_fields=fields)
        except IntegrityError:
            raise ConflictError(
                _("The owner already has a scope with the slug %(slug)s.") % {"slug": slug},
                details={"slug": [_("Already in use.")]},
            ) from None
    return scope


def scope_delete(*, scope: Scope) -> None:
    """Delete a shared scope with every row of every table that belongs to it."""
    if scope.is_personal:
        raise ConflictError(_("A personal scope cannot be deleted."))
    with transaction.atomic():
        erase_scope(scope)


def _user_by_username(username: str) -> AbstractBaseUser:
    user_model = get_user_model()
    user = user_model.objects.filter(**{user_model.USERNAME_FIELD: username}).first()
    if user is None or not user.is_active:
        raise ValidationFailed("username", _("No active user named %(u)s.") % {"u": username})
    return user


def membership_add(*, scope: Scope, username: str, role: Role) -> Membership:
    if scope.is_personal:
        raise ConflictError(_("A personal scope has no other members."))
    user = _user_by_username(username)
    try:
        with transaction.atomic():
            return Membership.objects.create(scope=scope, user=user, role=role)
    except IntegrityError:
        raise ConflictError(
            _("%(u)s is already a member of this scope.") % {"u": username},
            details={"username": [_("Already a member.")]},
        ) from None


def _membership(scope: Scope, username: str) -> Membership:
    """A member's row, for a change: the scope's row is locked first, so the membership changes
    of one scope run one after another (two admins removing each other wait, never deadlock)."""
    Scope.objects.select_for_update().filter(pk=scope.pk).first()
    memberships = Membership.objects.select_related("user").filter(scope=scope)
    user_model = get_user_model()
    membership = memberships.filter(**{f"user__{user_model.USERNAME_FIELD}": username}).first()
    if membership is None:
        raise NotFound(_("%(u)s is not a member of this scope.") % {"u": username})
    return membership


def _ensure_another_admin(scope: Scope, membership: Membership, message: str) -> None:
    """The last admin of a scope can neither leave nor be demoted."""
    if membership.role != Role.ADMIN:
        return
    # The scope's row is locked (see _membership), so no other change passes this check at once.
    admins = list(
        Membership.objects.filter(scope=scope, role=Role.ADMIN).values_list("id", flat=True)
    )
    if admins == [membership.id]:
        raise ConflictError(message)


def membership_change_role(*, scope: Scope, username: str, role: Role) -> Membership:
    with transaction.atomic():
        membership = _membership(scope, username)
        if role < membership.role:
            _ensure_another_admin(
                scope, membership, _("The last admin of a scope cannot be demoted.")
            )
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


def membership_remove(*, scope: Scope, username: str) -> None:
    """Remove a member (an admin's act) or leave (a member removing themself)."""
    with transaction.atomic():
        membership = _membership(scope, username)
        if scope.is_personal:
            raise ConflictError(_("Nobody can leave a personal scope."))
        _ensure_another_admin(
            scope, membership, _("The last admin cannot leave; make another member admin first.")
        )
        membership.delete()


def scope_leave(*, actor: Actor, scope_id: str) -> None:
    require_write_access(actor)
    require_account_access(actor)
    scope = readable_scope(actor, scope_id)
    membership_remove(scope=scope, username=actor.user.get_username())


@dataclass(frozen=True)
class IssuedToken:
    token: ApiToken
    secret: str


def hash_token_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def token_create(
    *,
    actor: Actor,
    name: str,
    read_only: bool = False,
    scopes: Iterable[Scope] | None = None,
    expires_at: datetime | None = None,
) -> IssuedToken:
    """Issue a token; its secret is returned here once and only its hash is kept."""
    require_write_access(actor)
    require_account_access(actor)
    refuse_secrets({"name": name})
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationFailed("expires_at", _("The expiry must be in the future."))
    # A token never outlives the token that creates it.
    limit = actor.token.expires_at if actor.token is not None else None
    if limit is not None:
        if expires_at is None:
            expires_at = limit
        elif expires_at > limit:
            raise ValidationFailed(
                "expires_at",
                _("A token cannot outlive the token that creates it (it expires %(at)s).")
                % {"at": limit.isoformat()},
            )
    visible = secrets.token_hex(4)
    secret = f"{TOKEN_PREFIX}{visible}_{secrets.token_urlsafe(32)}"
    scope_list = list(scopes) if scopes is not None else None
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=actor.user,
            name=name,
            prefix=f"{TOKEN_PREFIX}{visible}",
            secret_hash=hash_token_secret(secret),
            read_only=read_only,
            scope_restricted=scope_list is not None,
            expires_at=expires_at,
        )
        if scope_list:
            token.restricted_scopes.set(scope_list)
    return IssuedToken(token=token, secret=secret)


def token_revoke(*, actor: Actor, token: ApiToken) -> ApiToken:
    require_write_access(actor)
    require_account_access(actor)
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


TOKEN_TOUCH_INTERVAL_SECONDS = 60


def token_touch(*, token: ApiToken) -> None:
    """Record use; at most one write a minute per token so hot paths stay read-only."""
    now = timezone.now()
    last = token.last_used_at
    if last is None or (now - last).total_seconds() >= TOKEN_TOUCH_INTERVAL_SECONDS:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
