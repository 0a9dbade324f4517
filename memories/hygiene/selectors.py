"""Reads of the review queue, always from the scopes the actor administers (a reader of the
scope is refused, an outsider answered 404 like a missing id). The disputed marks recall shows
are read below both, in `memories.selectors`."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from memories.models import Conflict, ConflictStatus
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import Forbidden, NotFound
from zeromemory.core.paging import Page, cursor_page

_RELATED = (
    "scope",
    "resolved_by",
    "challenged_by",
    *(
        f"{side}__{field}"
        for side in ("memory_a", "memory_b")
        for field in ("kind", "scope", "created_by")
    ),
)


def reviewable_conflicts(actor: Actor) -> QuerySet[Conflict]:
    return Conflict.objects.filter(scope__in=access.administrable_scopes(actor)).select_related(
        *_RELATED
    )


@dataclass(frozen=True)
class ConflictFilters:
    scope: str | None = None
    status: str | None = ConflictStatus.OPEN
    verdict: str | None = None


def conflict_list(
    *, actor: Actor, filters: ConflictFilters, page: Page
) -> tuple[list[Conflict], str | None]:
    """Newest first, one page, in the scopes the actor administers."""
    conflicts = reviewable_conflicts(actor)
    if filters.scope:
        try:
            scope = access.administrable_scope(actor, filters.scope)
        except NotFound as exc:
            raise exc.naming("scope") from None
        conflicts = conflicts.filter(scope=scope)
    if filters.status:
        conflicts = conflicts.filter(status=filters.status)
    if filters.verdict:
        conflicts = conflicts.filter(verdict=filters.verdict)
    return cursor_page(conflicts, page)


def conflict_for_review(*, actor: Actor, public_id: str) -> Conflict:
    """One conflict of a scope the actor administers: 404 when it cannot read the scope (or
    there is no such conflict), 403 when it reads the scope without administering it."""
    conflict = (
        Conflict.objects.filter(scope__in=access.readable_scopes(actor), public_id=public_id)
        .select_related(*_RELATED)
        .first()
    )
    if conflict is None:
        raise NotFound(_("No conflict with id %(id)s.") % {"id": public_id})
    access.administrable_scope(actor, conflict.scope.public_id)
    return conflict


def conflicts_for_review(*, actor: Actor, public_ids: list[str]) -> list[Conflict]:
    """Several conflicts for a bulk resolution, in order, each as `conflict_for_review`; a
    refusal names the item (`items.<index>.conflict_id`)."""
    found = []
    for index, public_id in enumerate(public_ids):
        try:
            found.append(conflict_for_review(actor=actor, public_id=public_id))
        except (NotFound, Forbidden) as exc:
            raise exc.naming(f"items.{index}.conflict_id") from None
    return found
