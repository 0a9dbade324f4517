"""Reads of memories, always from the scopes the actor may read, and which of them are disputed
(the marks recall, context and the dashboard show)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connections, router
from django.db.models import Count, Prefetch, Q, QuerySet, prefetch_related_objects
from django.utils.translation import gettext as _

from memories.entities import links
from memories.models import (
    Conflict,
    ConflictAction,
    ConflictStatus,
    Memory,
    MemoryLink,
    MemoryState,
    Provenance,
    Relation,
    ValidityPeriod,
)
from scopes import access
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import Forbidden, NotFound
from zeromemory.core.paging import Page, cursor_page

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


def memory_detail(*, actor: Actor, public_id: str) -> Memory:
    """One readable memory with what its detail shows: provenance, versions, absorbed ones."""
    memory = (
        readable_memories(actor)
        .select_related("created_by", "forgotten_by", "restored_by", "superseded_by")
        .prefetch_related(
            "provenance__created_by",
            "provenance__chunk",
            "versions__edited_by",
            "versions__kind",
            "supersedes",
        )
        .filter(public_id=public_id)
        .first()
    )
    if memory is None:
        raise NotFound(_("No memory with id %(id)s.") % {"id": public_id})
    memory.verbatim_rows = [row for row in memory.provenance.all() if row.verbatim]
    return _with_links(actor, memory)


def memory_with_links(*, actor: Actor, public_id: str) -> Memory:
    """One readable memory with what `MemoryLinksOut` shows: its live links both ways, what it
    supersedes and is superseded by, and the memories judged to contradict it."""
    memory = (
        readable_memories(actor)
        .select_related("superseded_by")
        .prefetch_related("supersedes")
        .filter(public_id=public_id)
        .first()
    )
    if memory is None:
        raise NotFound(_("No memory with id %(id)s.") % {"id": public_id})
    return _with_links(actor, memory)


def _with_links(actor: Actor, memory: Memory) -> Memory:
    memory.links = links.memory_links(actor=actor, memory=memory)
    memory.contradicts = contradicting(actor=actor, memory=memory)
    return memory


# The review queue's states in which a judged contradiction stands beside a memory's links.
CONTRADICTION_SHOWN = (ConflictStatus.OPEN, ConflictStatus.RESOLVED)


def contradicting(*, actor: Actor, memory: Memory) -> list[str]:
    """The readable memories the judge found contradicting this one (open or resolved items):
    who disagrees with it, not the queue item itself, which only the scope's admins read."""
    rows = Conflict.objects.filter(
        Q(memory_a=memory) | Q(memory_b=memory),
        verdict=Relation.CONTRADICTION,
        status__in=CONTRADICTION_SHOWN,
    ).values_list("memory_a_id", "memory_b_id")
    others = {a if b == memory.pk else b for a, b in rows} - {None, memory.pk}
    found = readable_memories(actor).filter(pk__in=others).values_list("public_id", flat=True)
    return sorted(found)


def with_verbatim(memories: list[Memory]) -> None:
    """Attach each memory's writer-supplied verbatim phrases (`verbatim_rows`) and author."""
    prefetch_related_objects(
        memories,
        "created_by",
        Prefetch(
            "provenance",
            queryset=Provenance.objects.exclude(verbatim="").order_by("created_at", "id"),
            to_attr="verbatim_rows",
        ),
    )


def memory_for_write(*, actor: Actor, public_id: str) -> Memory:
    memory = memory_for_read(actor=actor, public_id=public_id)
    access.require_write_access(actor)
    if not access.can_write(actor, memory.scope):
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
    *, actor: Actor, filters: MemoryFilters, page: Page
) -> tuple[list[Memory], str | None]:
    """Newest first, one page; returns (memories, next cursor)."""
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
    return cursor_page(memories, page)


def translation_status_counts() -> dict[str, int]:
    """Memories per translation status over every scope, for the operator's /metrics: counts
    only, no memory and no scope leaves, so no actor is asked for."""
    rows = Memory.objects.values_list("translation_status").annotate(n=Count("id"))
    return dict(rows.order_by("translation_status"))


# The statement of `disputed`, written once: every recall and build_context runs it, and the
# ORM compiling its filter each time cost more than the statement's own round trip.
_DISPUTED = (
    "SELECT memory_a_id, memory_b_id FROM memories_conflict"
    " WHERE status = %s AND (memory_a_id = ANY(%s) OR memory_b_id = ANY(%s))"
)


def disputed(memory_ids: Iterable[int]) -> set[int]:
    """Which of these memories (by primary key) have an open queue item."""
    ids = list(memory_ids)
    if not ids:
        return set()
    found = set()
    with connections[router.db_for_read(Conflict)].cursor() as cursor:
        cursor.execute(_DISPUTED, [ConflictStatus.OPEN.value, ids, ids])
        for a, b in cursor.fetchall():
            found.update({a, b})
    return found & set(ids)


# How far the supersede chain is followed each way (a chain is rarely longer than a few links).
MAX_CHAIN = 25


@dataclass
class MemoryHistory:
    """What `GET /memories/{id}/history` shows: the memory (versions and provenance prefetched),
    its validity periods, the supersede chain both ways as the periods that link it (the
    readable memories only), and the hygiene actions that merged into it or retired it."""

    memory: Memory
    periods: list[ValidityPeriod]
    later: list[ValidityPeriod]  # this memory's successors: each period ended by a supersede
    earlier: list[ValidityPeriod]  # its predecessors, nearest first
    actions: list[ConflictAction]
    moved: dict[int, Provenance]
    links: list[MemoryLink]  # every typed link from or to it, removed ones too


def _chain(start: int, *, forward: bool, readable: QuerySet[Memory]) -> list[ValidityPeriod]:
    """The periods linking `start` to its successors (forward) or predecessors, breadth first,
    among readable memories only (history never widens access)."""
    links: list[ValidityPeriod] = []
    seen, frontier = {start}, [start]
    related = ValidityPeriod.objects.select_related("memory", "replaced_by", "ended_by")
    for _step in range(MAX_CHAIN):
        if not frontier:
            break
        if forward:
            rows = related.filter(memory_id__in=frontier, replaced_by__in=readable)
        else:
            rows = related.filter(replaced_by_id__in=frontier, memory__in=readable)
        frontier = []
        for row in rows.order_by("valid_until", "id"):
            other = row.replaced_by_id if forward else row.memory_id
            links.append(row)
            if other not in seen:
                seen.add(other)
                frontier.append(other)
    return links


def memory_history(*, actor: Actor, public_id: str) -> MemoryHistory:
    """One readable memory's history; a memory the actor cannot read answers 404."""
    memory = memory_detail(actor=actor, public_id=public_id)
    readable = readable_memories(actor)
    actions = list(
        ConflictAction.objects.filter(Q(kept=memory) | Q(retired=memory))
        .select_related("by", "undone_by", "kept", "retired")
        .order_by("created_at", "id")
    )
    moved_ids = [row[0] for action in actions for row in action.moved_provenance]
    return MemoryHistory(
        memory=memory,
        periods=list(memory.validity_periods.select_related("started_by", "ended_by")),
        later=_chain(memory.pk, forward=True, readable=readable),
        earlier=_chain(memory.pk, forward=False, readable=readable),
        actions=actions,
        moved={
            row.pk: row
            for row in Provenance.objects.filter(pk__in=moved_ids).select_related(
                "created_by", "chunk"
            )
        },
        links=links.memory_link_history(actor=actor, memory=memory),
    )


def scope_kind_counts(*, scope: Scope) -> dict[str, int]:
    """The valid memories of a scope the caller may read (obtained through `scopes.access`),
    counted by kind: what the scope holds now."""
    rows = (
        Memory.objects.filter(scope=scope, valid=True)
        .values_list("kind_id")
        .annotate(n=Count("id"))
        .order_by("kind_id")
    )
    return dict(rows)
