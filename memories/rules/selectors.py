"""Reads of rules. Approved rules are read by anyone who reads their scope; candidates, held and
rejected ones only by the scope's admins (a reader is refused, an outsider answered 404)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from memories.models import Rule, RuleStatus
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound

MAX_RULES = 500
_RELATED = ("scope", "memory", "memory__kind", "decided_by")


def _rules(scopes) -> QuerySet[Rule]:
    return (
        Rule.objects.filter(scope__in=scopes, memory__valid=True)
        .select_related(*_RELATED)
        .prefetch_related("versions")
    )


def rule_list(
    *, actor: Actor, scope: str | None = None, status: str = RuleStatus.APPROVED
) -> list[Rule]:
    """Rules of one status: approved ones of the readable scopes, the others of the scopes the
    actor administers; in the scope's order, then oldest first."""
    admin = status != RuleStatus.APPROVED
    if scope:
        try:
            found = (
                access.administrable_scope(actor, scope)
                if admin
                else access.readable_scope(actor, scope)
            )
        except NotFound as exc:
            raise exc.naming("scope") from None
        scopes = [found]
    else:
        scopes = access.administrable_scopes(actor) if admin else access.readable_scopes(actor)
    rules = _rules(scopes).filter(status=status)
    return list(
        rules.order_by("scope__name", "scope_id", "position", "created_at", "id")[:MAX_RULES]
    )


def rule_for_admin(*, actor: Actor, public_id: str) -> Rule:
    """One rule of a scope the actor administers: 404 when it cannot read the scope (or there is
    no such rule), 403 when it reads the scope without administering it."""
    rule = _rules(access.readable_scopes(actor)).filter(public_id=public_id).first()
    if rule is None:
        raise NotFound(_("No rule with id %(id)s.") % {"id": public_id})
    access.administrable_scope(actor, rule.scope.public_id)
    return rule


def rule_for_decision(*, actor: Actor, public_id: str) -> Rule:
    """A rule to approve, reword or move: one of a scope the actor administers (as
    `rule_for_admin`), decided by a person signed in with a recent password check (403 for a
    token or an OAuth grant, `reauthentication_required` for an old check)."""
    rule = rule_for_admin(actor=actor, public_id=public_id)
    access.require_recent_password(actor)
    return rule
