"""The one door to tenant data: which scopes an actor (a user, possibly through a token) may touch.

Every query of tenant data starts from `readable_scopes`, `writable_scopes` or
`administrable_scopes`. A scope the actor may not read answers `NotFound`, the same answer as a
scope that does not exist, so ids of other tenants leak nothing. A scope the actor may read but not
write answers `Forbidden`.

What each kind of actor may do:

- A user (the dashboard, or the API with the session cookie) acts with their role in each scope
  they are a member of: reader < writer < admin.
- A full token acts as its user.
- A read-only token reads what its user reads and writes nothing (no memories, scopes, members
  or tokens).
- A token restricted to scopes acts only inside those scopes, and there at most as a writer: it
  reads and writes memories there, but administers nothing (no scope creation, rename or
  deletion, no membership changes, not even leaving), manages no tokens (not even listing
  them), and sees only the activity rows that concern its scopes alone. `/me` shows its scopes.
- What changes what every member's agents are told (approving, editing and reordering rules)
  needs a person signed in to a session who gave their password within `REAUTH_MINUTES`; no
  token or OAuth grant, however full (`require_recent_password`).
- The queries of others that found nothing are shown to a scope's admins acting as themselves:
  a session or a full API token of theirs, never a restricted or read-only token or an OAuth
  grant (`acts_as_self`).
- A revoked or expired token, or a deactivated user, is nobody: 401 (no scope at all here).
- A member removed from a scope is an outsider there at once: 404, like a missing scope.

The contract with services (as in Zulip): the caller (a view, a tool, a task) obtains every object
through this module (`readable_scope`, `writable_scope`, `administrable_scope`) or a selector
built on it, and passes the objects to a service. Services trust what they receive and check
nothing again; they take the actor only when they use it (to record who acted, or for rules about
the actor's own account such as leaving a scope or issuing a token).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import cache

from django.conf import settings
from django.db import connections, router
from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery
from django.utils.translation import gettext as _

from scopes.models import ApiToken, Membership, Role, Scope, ScopeKind
from zeromemory.core import prepared
from zeromemory.core.actor import Actor
from zeromemory.core.errors import (
    Forbidden,
    NotFound,
    ReauthenticationRequired,
    ValidationFailed,
)


def _scopes_with_role(actor: Actor, minimum: Role) -> QuerySet[Scope]:
    # Sign-in refuses such a token at once; this also stops work it started (an extraction of a
    # chunk it sent) once it is revoked or expires.
    if not actor.user.is_active or (actor.token is not None and not actor.token.is_active()):
        return Scope.objects.none()
    scopes = Scope.objects.filter(memberships__user=actor.user, memberships__role__gte=minimum)
    if actor.token is not None and actor.token.scope_restricted:
        scopes = scopes.filter(
            id__in=ApiToken.restricted_scopes.through.objects.filter(
                apitoken_id=actor.token.id
            ).values("scope_id")
        )
    return scopes


def readable_scopes(actor: Actor) -> QuerySet[Scope]:
    return _scopes_with_role(actor, Role.READER)


def writable_scopes(actor: Actor) -> QuerySet[Scope]:
    if actor.read_only:
        return Scope.objects.none()
    return _scopes_with_role(actor, Role.WRITER)


def administrable_scopes(actor: Actor) -> QuerySet[Scope]:
    if actor.read_only or actor.scope_restricted:
        return Scope.objects.none()
    return _scopes_with_role(actor, Role.ADMIN)


# What `readable_scopes(actor).values_list("public_id", "id")` reads, written once: every recall
# and build_context asks it, and the ORM compiling the join on each call cost more than its
# round trip. The same conditions as `_scopes_with_role`, in the same order of rows.
# Prepared on the connection with its plan kept (`zeromemory.core.prepared`): planning the join
# took more than running it. Its values are the role, the user, the public ids asked for (or
# NULL) and a restricted token (or NULL), each read once through the `asked` row.
_READABLE_IDS = """
SELECT s.public_id, s.id
FROM (SELECT %s::int AS role, %s::bigint AS user_id, %s::text[] AS public_ids,
             %s::bigint AS token) AS asked
JOIN scopes_membership m ON m.user_id = asked.user_id AND m.role >= asked.role
JOIN scopes_scope s ON s.id = m.scope_id
WHERE (asked.public_ids IS NULL OR s.public_id = ANY(asked.public_ids))
  AND (asked.token IS NULL OR s.id IN (
    SELECT r.scope_id FROM scopes_apitoken_restricted_scopes r WHERE r.apitoken_id = asked.token))
ORDER BY s.kind, s.name, s.id
"""


def readable_scope_ids(
    actor: Actor, *, public_ids: Sequence[str] | None = None
) -> list[tuple[str, int]]:
    """(public id, primary key) of each scope the actor may read, or of those among
    `public_ids`: the rows of `readable_scopes(actor)`, in its order, in one statement."""
    if not actor.user.is_active or (actor.token is not None and not actor.token.is_active()):
        return []
    restricted = actor.token is not None and actor.token.scope_restricted
    params = [
        int(Role.READER),
        actor.user.pk,
        list(public_ids) if public_ids is not None else None,
        actor.token.pk if restricted else None,
    ]
    with connections[router.db_for_read(Scope)].cursor() as cursor:
        prepared.execute(cursor, _READABLE_IDS, params)
        return [(public_id, pk) for public_id, pk in cursor.fetchall()]


def readable_scopes_with_own_role(actor: Actor) -> QuerySet[Scope]:
    """Readable scopes, each annotated with `my_role` from the same join (one query)."""
    return readable_scopes(actor).annotate(my_role=F("memberships__role"))


def writes_with_role(actor: Actor, role: int | None) -> bool:
    """Whether the actor may write memories in a readable scope where its user has `role`: what
    `writable_scopes` answers, for a role already read."""
    return not actor.read_only and role is not None and role >= Role.WRITER


def can_write(actor: Actor, scope: Scope) -> bool:
    """Whether the actor may write memories in this scope (which it can read)."""
    return writable_scopes(actor).filter(pk=scope.pk).exists()


def readable_scopes_with_roles(actor: Actor) -> QuerySet[Scope]:
    """Readable scopes, each annotated with `my_role` (the user's role) and `member_count`."""
    members = (
        Membership.objects.filter(scope=OuterRef("pk"))
        .values("scope")
        .annotate(n=Count("id"))
        .values("n")
    )
    return readable_scopes_with_own_role(actor).annotate(
        member_count=Subquery(members, output_field=IntegerField()),
    )


def role_in(actor: Actor, scope: Scope) -> Role | None:
    """The actor's role in a scope it can read, or None."""
    role = (
        Membership.objects.filter(scope=scope, user=actor.user)
        .values_list("role", flat=True)
        .first()
    )
    return Role(role) if role is not None else None


def roles_in(actor: Actor, scopes: list[Scope]) -> dict[int, Role]:
    """The actor's role in each of these scopes (already obtained through this module)."""
    return {
        scope_id: Role(role)
        for scope_id, role in Membership.objects.filter(
            user=actor.user, scope__in=scopes
        ).values_list("scope_id", "role")
    }


def _found(scope: Scope | None, public_id: str) -> Scope:
    if scope is None:
        raise NotFound(_("No scope with id %(id)s.") % {"id": public_id})
    return scope


def readable_scope(actor: Actor, public_id: str) -> Scope:
    return _found(readable_scopes(actor).filter(public_id=public_id).first(), public_id)


# What `readable_scopes_with_own_role(actor).filter(public_id=...).first()` reads, written once:
# every write asks it before its model may start, and the ORM compiling the join cost about
# 1 ms of Python, twice its round trip. The same conditions as `_scopes_with_role`; a public id
# and a (scope, user) membership are unique, so it finds one row at most.
_SCOPE_WITH_ROLE = """
SELECT {columns}, m.role FROM scopes_scope s JOIN scopes_membership m ON m.scope_id = s.id
WHERE s.public_id = %(public_id)s AND m.role >= %(role)s AND m.user_id = %(user)s
  AND (%(token)s::bigint IS NULL OR s.id IN (
    SELECT r.scope_id FROM scopes_apitoken_restricted_scopes r WHERE r.apitoken_id = %(token)s))
"""


@cache
def _scope_with_role_statement() -> str:
    return _SCOPE_WITH_ROLE.format(
        columns=", ".join(f's."{field.column}"' for field in Scope._meta.concrete_fields)
    )


def readable_scope_with_role(actor: Actor, public_id: str) -> Scope:
    """A readable scope annotated with `my_role`, the actor's role in it (one query)."""
    if not actor.user.is_active or (actor.token is not None and not actor.token.is_active()):
        return _found(None, public_id)
    restricted = actor.token is not None and actor.token.scope_restricted
    params = {
        "public_id": public_id,
        "role": int(Role.READER),
        "user": actor.user.pk,
        "token": actor.token.pk if restricted else None,
    }
    alias = router.db_for_read(Scope)
    with connections[alias].cursor() as cursor:
        cursor.execute(_scope_with_role_statement(), params)
        row = cursor.fetchone()
    if row is None:
        return _found(None, public_id)
    fields = Scope._meta.concrete_fields
    scope = Scope.from_db(alias, [field.attname for field in fields], row[: len(fields)])
    scope.my_role = row[len(fields)]
    return scope


def require_write_access(actor: Actor) -> None:
    """Refuse any write through a read-only token."""
    if actor.read_only:
        raise Forbidden(_("This token is read-only."))


def is_oauth_grant(actor: Actor) -> bool:
    """Whether the actor's token is the one an OAuth grant acts as."""
    if actor.token is None:
        return False
    return ApiToken.objects.filter(pk=actor.token.pk, oauth_grant__isnull=False).exists()


def acts_as_self(actor: Actor) -> bool:
    """A person in a session, or a full API token of theirs (not read-only, not restricted to
    scopes, not an OAuth grant's)."""
    if actor.token is None:
        return True
    return not actor.read_only and not actor.scope_restricted and not is_oauth_grant(actor)


def require_recent_password(actor: Actor) -> None:
    """Refuse a token or an OAuth grant (403), and a session whose password check is older
    than `REAUTH_MINUTES` (403 `reauthentication_required`)."""
    if actor.token is not None:
        raise Forbidden(
            _("This needs a person signed in to the dashboard, never a token or an OAuth grant.")
        )
    checked = actor.password_checked_at
    if checked is None or time.time() - checked > settings.REAUTH_MINUTES * 60:
        raise ReauthenticationRequired(
            _("Confirm your password first: it was last checked more than %(n)d minutes ago.")
            % {"n": settings.REAUTH_MINUTES}
        )


def require_account_access(actor: Actor) -> None:
    """Refuse what concerns the account rather than one scope (tokens, new scopes) to a token
    restricted to scopes."""
    if actor.scope_restricted:
        raise Forbidden(_("A token restricted to scopes cannot manage tokens or create scopes."))


def _require(actor: Actor, public_id: str, minimum: Role, message: str) -> Scope:
    # The scope and the actor's role in it in one query (every write asks).
    scope = readable_scope_with_role(actor, public_id)
    require_write_access(actor)
    if scope.my_role is None or scope.my_role < minimum:
        raise Forbidden(message)
    if minimum >= Role.ADMIN and actor.scope_restricted:
        raise Forbidden(_("A token restricted to scopes cannot administer them."))
    return scope


def writable_scope(actor: Actor, public_id: str) -> Scope:
    return _require(
        actor, public_id, Role.WRITER, _("Writing needs the writer role in this scope.")
    )


def administrable_scope(actor: Actor, public_id: str) -> Scope:
    return _require(actor, public_id, Role.ADMIN, _("This needs the admin role in this scope."))


def personal_scope(actor: Actor) -> Scope:
    """The actor's personal scope, where a write that names no scope goes, if it may write it."""
    scope = writable_scopes(actor).filter(kind=ScopeKind.PERSONAL).first()
    if scope is None:
        require_write_access(actor)
        raise ValidationFailed(
            "scope", _("Name a scope: this token cannot write your personal one.")
        )
    return scope
