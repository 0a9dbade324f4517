"""Erasure in tenancy: a scope, or an account with its personal scope, removed with every row.

Tenancy's own rows go here; the apps above it remove theirs when `scopes.signals` announces
the erasure, inside the same transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils.translation import gettext as _

from scopes.access import Actor
from scopes.models import Membership, Role, Scope, ScopeKind
from scopes.signals import account_erasing, scope_erasing
from zeromemory.core.errors import ConflictError, Forbidden, ValidationFailed
from zeromemory.core.throttling import forget_windows

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def erase_scope(scope: Scope) -> None:
    scope_erasing.send(sender=Scope, scope=scope)
    _forget_admin_log(Scope, [scope.pk])
    scope.delete()


def _forget_admin_log(model: type, pks: list[int]) -> None:
    """The admin's history of these rows: it names them (`object_repr`)."""
    kind = ContentType.objects.get_for_model(model)
    LogEntry.objects.filter(content_type=kind, object_id__in=[str(pk) for pk in pks]).delete()


def sole_admin_scopes(*, user: AbstractBaseUser) -> list[Scope]:
    """The shared scopes where this user is the only admin: someone must take them over (or
    they must be deleted) before the account can go."""
    admins = Membership.objects.filter(role=Role.ADMIN)
    mine = admins.filter(user=user).exclude(scope__kind=ScopeKind.PERSONAL).values("scope_id")
    return [
        scope
        for scope in Scope.objects.filter(id__in=mine).order_by("name", "id")
        if not admins.filter(scope=scope).exclude(user=user).exists()
    ]


def _hand_over(scope: Scope, user: AbstractBaseUser) -> None:
    """The scope's ownership passes to its longest-standing other admin (slug kept when free)."""
    heir = (
        Membership.objects.filter(scope=scope, role=Role.ADMIN)
        .exclude(user=user)
        .order_by("created_at", "id")
        .first()
        .user
    )
    slug, number = scope.slug, 1
    while Scope.objects.filter(owner=heir, slug=slug).exists():
        number += 1
        slug = f"{scope.slug}-{number}"
    scope.owner, scope.slug = heir, slug
    scope.save(update_fields=["owner", "slug"])


def _forget_sessions(user: AbstractBaseUser) -> None:
    """Every session signed in as this user (the session store keys them by id only)."""
    stale = [
        session.pk
        for session in Session.objects.iterator(chunk_size=1000)
        if session.get_decoded().get("_auth_user_id") == str(user.pk)
    ]
    Session.objects.filter(pk__in=stale).delete()


def _forget_sign_ins(user: AbstractBaseUser) -> None:
    username = user.get_username()
    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        model.objects.filter(username=username).delete()


def account_delete(*, actor: Actor, password: str, delete_shared_writes: bool = False) -> None:
    """Delete the actor's account: its personal scope and everything in it, its tokens and
    OAuth grants, chunks, activity, idempotency records, rate-limit windows, sessions and
    sign-in records. What it wrote in shared scopes stays with them, anonymized, unless
    `delete_shared_writes`. Only a signed-in person, who gives the password again."""
    if actor.token is not None:
        raise Forbidden(_("Deleting an account needs a signed-in session, never a token."))
    user = actor.user
    if not user.check_password(password):
        raise ValidationFailed("password", _("This is not the account's password."))
    with transaction.atomic():
        Membership.objects.select_for_update().filter(user=user).exists()
        sole = sole_admin_scopes(user=user)
        if sole:
            names = ", ".join(f"{scope.name} ({scope.public_id})" for scope in sole)
            raise ConflictError(
                _("Make another member admin of these scopes (or delete them) first: %(s)s.")
                % {"s": names},
                details={"scopes": [scope.public_id for scope in sole]},
            )
        account_erasing.send(
            sender=get_user_model(), user=user, delete_shared_writes=delete_shared_writes
        )
        for scope in Scope.objects.filter(owner=user).exclude(kind=ScopeKind.PERSONAL):
            _hand_over(scope, user)
        for scope in Scope.objects.filter(owner=user, kind=ScopeKind.PERSONAL):
            erase_scope(scope)
        _forget_sessions(user)
        _forget_sign_ins(user)
        forget_windows(key=f"user:{user.pk}")
        _forget_admin_log(get_user_model(), [user.pk])
        user.delete()
