"""What a scope holds, for `describe_scope` and `GET /api/v1/scopes/{id}/overview`: its valid
memories by kind, the newest and the most recalled few, its approved rules and how many review
items are open. Whoever reads the scope gets that; its members and their roles only go to whom
the access module lets administer the scope."""

from __future__ import annotations

from django.db.models import Count

from memories.approved_rules import approved_rules
from memories.insights.schemas import KindCountOut, MemoryLineOut, OverviewRuleOut, ScopeOverviewOut
from memories.models import Conflict, ConflictStatus, Memory
from scopes import access
from scopes import selectors as scope_selectors
from scopes.models import Role
from scopes.schemas import MemberOut
from zeromemory.core.actor import Actor
from zeromemory.core.errors import Forbidden, NotFound

LIST_LENGTH = 5  # the newest and the most recalled memories shown


def _lines(memories) -> list[MemoryLineOut]:
    return [
        MemoryLineOut(id=m.public_id, kind=m.kind_id, content=m.content, times=m.recall_count)
        for m in memories
    ]


def _members(actor: Actor, scope_id: str) -> list[MemberOut] | None:
    """The members with their roles when the actor may administer the scope, else None."""
    try:
        scope = access.administrable_scope(actor, scope_id)
    except Forbidden:
        return None
    return [MemberOut.of(m) for m in scope_selectors.scope_members(scope=scope)]


def scope_overview(*, actor: Actor, scope_id: str) -> ScopeOverviewOut:
    try:
        scope = access.readable_scope_with_role(actor, scope_id)
    except NotFound as exc:
        raise exc.naming("scope") from None
    memories = Memory.objects.filter(scope=scope)
    valid = memories.filter(valid=True)
    kinds = valid.values("kind_id").annotate(n=Count("id")).order_by("-n", "kind_id")
    newest = valid.order_by("-created_at", "-id")[:LIST_LENGTH]
    recalled = valid.filter(recall_count__gt=0).order_by("-recall_count", "-id")[:LIST_LENGTH]
    rules = approved_rules([scope.pk])
    open_items = Conflict.objects.filter(scope=scope, status=ConflictStatus.OPEN).count()
    return ScopeOverviewOut(
        scope=scope.public_id,
        name=scope.name,
        kind=scope.kind,
        role=Role(scope.my_role).slug if scope.my_role is not None else None,
        memories=sum(row["n"] for row in kinds),
        retired=memories.filter(valid=False).count(),
        kinds=[KindCountOut(kind=row["kind_id"], count=row["n"]) for row in kinds],
        newest=_lines(newest),
        most_recalled=_lines(recalled),
        rules=[
            OverviewRuleOut(id=r.public_id, text=r.text, memory_id=r.memory.public_id)
            for r in rules
        ],
        review_open=open_items,
        members=_members(actor, scope_id),
    )
