"""Reads of entities, through the access module: an entity of a scope one cannot read does not
exist for them (404), one of a scope one may read but not change is forbidden (403). Searching a
scope's entities, describing one (its memories, its neighbours, its timeline) and listing a
scope's merges and splits live here too; every one of them names only entities and memories of
scopes the actor reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils.translation import gettext as _

from memories.entities.dictionary import resolved
from memories.entities.names import name_key
from memories.models import Entity, EntityAlias, EntityMention, EntityMerge, EntitySplit, Memory
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, NotFound
from zeromemory.core.paging import Page, cursor_page


def readable_entities(actor: Actor) -> QuerySet[Entity]:
    return Entity.objects.filter(scope__in=access.readable_scopes(actor))


def entity_for_read(*, actor: Actor, public_id: str) -> Entity:
    entity = readable_entities(actor).select_related("scope").filter(public_id=public_id).first()
    if entity is None:
        raise NotFound(_("No such entity."))
    return entity


def entity_for_write(*, actor: Actor, public_id: str) -> Entity:
    """An entity whose scope the actor may write (aliases)."""
    entity = entity_for_read(actor=actor, public_id=public_id)
    access.writable_scope(actor, entity.scope.public_id)
    return entity


def entity_for_admin(*, actor: Actor, public_id: str) -> Entity:
    """An entity whose scope the actor administers (merges and splits, and their undoing)."""
    entity = entity_for_read(actor=actor, public_id=public_id)
    access.administrable_scope(actor, entity.scope.public_id)
    return entity


# -- searching and describing --------------------------------------------------------------------

NEIGHBOURS_MAX = 24
TIMELINE_DAYS_MAX = 120


def entity_search(
    *, actor: Actor, query: str = "", kind: str = "", scope_id: str = "", page: Page
) -> tuple[list[Entity], str | None]:
    """Readable entities standing on their own (not merged into another), newest first, one
    page: those with a name or alias containing `query` (case-insensitively, compared by the
    key names resolve by; the aliases of entities merged into one count as its own), of
    `kind`, in the scope `scope_id`. Each carries `memory_count`: readable memories naming it."""
    entities = readable_entities(actor).filter(merged_into__isnull=True)
    if scope_id:
        try:
            entities = entities.filter(scope=access.readable_scope(actor, scope_id))
        except NotFound as exc:
            raise exc.naming("scope") from None
    if kind:
        entities = entities.filter(kind=kind)
    key = name_key(query) if query.strip() else ""
    if key:
        named = EntityAlias.objects.filter(normalized__contains=key).filter(
            Q(entity_id=OuterRef("pk")) | Q(entity__merged_into_id=OuterRef("pk"))
        )
        entities = entities.filter(Exists(named))
    entities = entities.select_related("scope").prefetch_related("aliases")
    found, next_cursor = cursor_page(entities, page)
    counts = memory_counts(actor, found)
    for entity in found:
        entity.memory_count = counts.get(entity.id, 0)
    return found, next_cursor


def _family(entity: Entity) -> list[int]:
    """The entity and every entity folded into it by merges that stand (their mentions are its
    own while the merges stand)."""
    ids, frontier = [entity.id], [entity.id]
    while frontier and len(ids) < 1000:
        frontier = list(
            Entity.objects.filter(merged_into_id__in=frontier)
            .exclude(id__in=ids)
            .values_list("id", flat=True)
        )
        ids += frontier
    return ids


def _mentioning(actor: Actor, entity_ids: list[int]) -> QuerySet[Memory]:
    """The readable, current memories that mention any of these entities."""
    mentioned = EntityMention.objects.filter(entity_id__in=entity_ids).values("memory_id")
    return Memory.objects.filter(
        scope__in=access.readable_scopes(actor), valid=True, id__in=mentioned
    )


def memory_counts(actor: Actor, entities: list[Entity]) -> dict[int, int]:
    """Each entity's count of current memories the actor reads that mention it."""
    if not entities:
        return {}
    rows = (
        EntityMention.objects.filter(
            entity__in=entities,
            memory__valid=True,
            memory__scope__in=access.readable_scopes(actor),
        )
        .values("entity_id")
        .annotate(memories=Count("memory_id", distinct=True))
    )
    return {row["entity_id"]: row["memories"] for row in rows}


@dataclass(frozen=True)
class Neighbour:
    """An entity that current memories mention together with the described one."""

    entity: Entity
    shared_memories: int


@dataclass(frozen=True)
class TimelineDay:
    day: date
    memories: int


@dataclass(frozen=True)
class EntityDescription:
    entity: Entity
    memory_count: int
    memories: list[Memory]  # newest first, one page
    next_cursor: str | None
    neighbours: list[Neighbour]  # most shared memories first
    timeline: list[TimelineDay]  # oldest first: the days its memories were written
    folded: list[Entity] = field(default_factory=list)  # entities merged into it


def entity_description(*, actor: Actor, entity: Entity, page: Page) -> EntityDescription:
    """What the readable memories say about `entity` (obtained through `entity_for_read`): its
    current memories newest first (one page), the entities those memories also mention (only of
    scopes the actor reads: an unreadable entity is never named, not even as a neighbour), and
    a timeline of the days they were written. Merged entities count as their survivor."""
    family = _family(entity)
    mentioning = _mentioning(actor, family)
    memories, next_cursor = cursor_page(
        mentioning.select_related("scope", "kind").defer("embedding"), page
    )
    readable = access.readable_scopes(actor)
    pairs = (
        EntityMention.objects.filter(memory__in=mentioning.values("id"), entity__scope__in=readable)
        .exclude(entity_id__in=family)
        .values_list("entity_id", "memory_id")
        .distinct()
    )
    memories_of: dict[int, set[int]] = {}
    for entity_id, memory_id in pairs:
        memories_of.setdefault(entity_id, set()).add(memory_id)
    current = resolved(Entity.objects.filter(id__in=memories_of, scope__in=readable))
    shared: dict[int, set[int]] = {}
    for entity_id, memory_ids in memories_of.items():
        survivor = current.get(entity_id)
        if survivor is None or survivor.id in family:
            continue
        shared.setdefault(survivor.id, set()).update(memory_ids)
    survivors = {
        survivor.id: survivor
        for survivor in Entity.objects.filter(id__in=shared, scope__in=readable)
    }
    neighbours = sorted(
        (
            Neighbour(entity=survivors[entity_id], shared_memories=len(memory_ids))
            for entity_id, memory_ids in shared.items()
            if entity_id in survivors
        ),
        key=lambda neighbour: (-neighbour.shared_memories, neighbour.entity.name.lower()),
    )[:NEIGHBOURS_MAX]
    days = (
        mentioning.annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(memories=Count("id"))
        .order_by("-day")[:TIMELINE_DAYS_MAX]
    )
    timeline = sorted(
        (TimelineDay(day=row["day"], memories=row["memories"]) for row in days),
        key=lambda row: row.day,
    )
    return EntityDescription(
        entity=entity,
        memory_count=mentioning.count(),
        memories=memories,
        next_cursor=next_cursor,
        neighbours=neighbours,
        timeline=timeline,
        folded=list(Entity.objects.filter(id__in=family[1:]).order_by("name")),
    )


def entity_aliases(entity: Entity) -> list[str]:
    """Every name the entity answers to, its own first, then those of entities folded into it."""
    rows = EntityAlias.objects.filter(entity_id__in=_family(entity)).order_by("id")
    names = [alias.alias for alias in rows if alias.entity_id == entity.id]
    names += [alias.alias for alias in rows if alias.entity_id != entity.id]
    return list(dict.fromkeys(names))


# -- merges and splits, for a scope's admins ----------------------------------------------------


def open_merge_of(*, actor: Actor, public_id: str) -> EntityMerge:
    """The standing merge that folded the entity `public_id` (whose scope the actor administers)."""
    entity = entity_for_admin(actor=actor, public_id=public_id)
    merge = EntityMerge.objects.filter(merged=entity, undone_at__isnull=True).first()
    if merge is None:
        raise ConflictError(
            _("This entity is not merged into another."), details={"entity": [_("Not merged.")]}
        )
    return merge


def split_that_made(*, actor: Actor, public_id: str) -> EntitySplit:
    """The split that made the entity `public_id` (whose scope the actor administers)."""
    entity = entity_for_admin(actor=actor, public_id=public_id)
    split = EntitySplit.objects.filter(created=entity).order_by("-at", "-id").first()
    if split is None:
        raise ConflictError(
            _("This entity was not made by a split."), details={"entity": [_("Not split off.")]}
        )
    return split


@dataclass(frozen=True)
class ReshapeEntry:
    """One merge or split of a scope, with the entities it names."""

    kind: str  # "merge" or "split"
    row: EntityMerge | EntitySplit
    at: datetime


def scope_reshapes(*, actor: Actor, scope_id: str, limit: int = 200) -> list[ReshapeEntry]:
    """A scope's merges and splits, newest first (undone ones too), for its admins."""
    scope = access.administrable_scope(actor, scope_id)
    related = ("by", "undone_by")
    merges = EntityMerge.objects.filter(scope=scope).select_related("merged", "survivor", *related)[
        :limit
    ]
    splits = EntitySplit.objects.filter(scope=scope).select_related("source", "created", *related)[
        :limit
    ]
    entries = [ReshapeEntry(kind="merge", row=row, at=row.at) for row in merges]
    entries += [ReshapeEntry(kind="split", row=row, at=row.at) for row in splits]
    return sorted(entries, key=lambda entry: entry.at, reverse=True)[:limit]


def split_aliases(split: EntitySplit) -> list[str]:
    """The names a split moved, in the order they were given."""
    rows = EntityAlias.objects.filter(id__in=split.alias_ids).order_by("id")
    return [row.alias for row in rows]


def entities_of_memories(*, actor: Actor, memories: list[Memory]) -> dict[int, list[Entity]]:
    """What each of these readable memories is about (its chips on a card): the entities it
    mentions, merged ones resolved to their survivor, only of scopes the actor reads; each
    memory's list by name. One query for the mentions, and one per merge hop."""
    if not memories:
        return {}
    readable = access.readable_scopes(actor)
    mentions = EntityMention.objects.filter(
        memory_id__in=[memory.pk for memory in memories],
        memory__scope__in=readable,
        entity__scope__in=readable,
    ).select_related("entity")
    pairs = [(mention.memory_id, mention.entity) for mention in mentions]
    current = resolved(entity for _, entity in pairs)
    about: dict[int, dict[int, Entity]] = {}
    for memory_id, entity in pairs:
        survivor = current[entity.id]
        about.setdefault(memory_id, {})[survivor.id] = survivor
    return {
        memory_id: sorted(found.values(), key=lambda entity: entity.name.lower())
        for memory_id, found in about.items()
    }
