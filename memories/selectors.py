"""Reads of memories, always from the scopes the actor may read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from memories.models import Memory, MemoryState
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import Forbidden, NotFound

STATES = (*MemoryState.values, "all")


def readable_memories(actor: Actor) -> QuerySet[Memory]:
    return Memory.objects.filter(scope__in=access.readable_scopes(actor)).select_related(
        "scope", "kind"
    )


def memory_for_read(*, actor: Actor, public_id: str) -> Memory:
    memory = readable_memories(actor).filter(public_id=public_id).first()
    if memory is None:
        raise NotFound(_("No memory with id %(id)s.") % {"id": public_id})
    return memory


def memory_for_write(*, actor: Actor, public_id: str) -> Memory:
    memory = memory_for_read(actor=actor, public_id=public_id)
    access.require_write_access(actor)
    if not access.writable_scopes(actor).filter(pk=memory.scope_id).exists():
        raise Forbidden(_("Writing needs the writer role in this scope."))
    return memory


@dataclass(frozen=True)
class MemoryFilters:
    scope: str | None = None
    kind: str | None = None
    translation_status: str | None = None
    author_kind: str | None = None
    state: str = "valid"
    created_after: datetime | None = None
    created_before: datetime | None = None


def memory_list(
    *, actor: Actor, filters: MemoryFilters, cursor: str | None = None, limit: int = 50
) -> tuple[list[Memory], str | None]:
    """Newest first; `cursor` is the last id of the previous page. Returns (page, next cursor)."""
    memories = readable_memories(actor)
    if filters.scope:
        try:
            memories = memories.filter(scope=access.readable_scope(actor, filters.scope))
        except NotFound as exc:
            raise exc.naming("scope") from None
    if filters.kind:
        memories = memories.filter(kind_id=filters.kind)
    if filters.translation_status:
        memories = memories.filter(translation_status=filters.translation_status)
    if filters.author_kind:
        memories = memories.filter(author_kind=filters.author_kind)
    if filters.state in MemoryState.values:
        memories = memories.filter(MemoryState(filters.state).condition)
    if filters.created_after:
        memories = memories.filter(created_at__gte=filters.created_after)
    if filters.created_before:
        memories = memories.filter(created_at__lt=filters.created_before)
    if cursor:
        memories = memories.filter(public_id__lt=cursor)
    page = list(memories.order_by("-public_id")[: limit + 1])
    next_cursor = page[limit - 1].public_id if len(page) > limit else None
    return page[:limit], next_cursor
