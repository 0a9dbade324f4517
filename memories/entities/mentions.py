"""Writing what memories are about: the mentions of a batch of memories, in a few statements.

For the whole batch: one dictionary lookup of every key (the texts' n-grams, what the detector
found, the names and aliases writers gave); new entities for what is found or given and not
known yet (with their aliases, a concurrent writer's alias winning a race); one insert of the
mentions. A batch that names nothing new costs two statements.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection
from django.utils import timezone

from memories.entities.detect import NAME, Found
from memories.entities.dictionary import aliases_found
from memories.entities.given import GivenEntity
from memories.entities.names import dictionary_hits, name_key
from memories.models import Entity, EntityAlias, EntityMention, Memory, MentionSource
from zeromemory.core.ids import new_public_id


@dataclass
class MentionWrite:
    """One memory's mentions to write: its text's keys and findings, and what its writer gave."""

    memory: Memory
    keys: dict[str, str]  # `names.text_keys` of its text
    found: list[Found]  # `detect.detected` of its text
    given: tuple[GivenEntity, ...] = ()
    given_source: str = MentionSource.AGENT
    detected_source: str = MentionSource.DETECTED


@dataclass
class _NewEntity:
    scope_id: int
    name: str
    kind: str
    source: str
    aliases: list[str] = field(default_factory=list)
    entity: Entity | None = None


def looked_up(
    scope_id: int, keys: dict[str, str], found: list[Found], given: tuple[GivenEntity, ...]
) -> set[tuple[int, str]]:
    """The (scope id, key) pairs a memory's mentions are looked up under in the dictionary: its
    text's keys, what the detector found, the names and aliases its writer gave."""
    pairs = {(scope_id, key) for key in keys}
    pairs.update((scope_id, item.key) for item in found)
    for item in given:
        pairs.update((scope_id, name_key(name)) for name in (item.name, *item.aliases))
    return pairs


def mentions_written(
    writes: list[MentionWrite], *, by=None, known: dict[tuple[int, str], EntityAlias] | None = None
) -> list[EntityMention]:
    """Record what each memory is about (creating the entities not known in its scope yet);
    the memories are saved. Returns the mentions meant (existing ones are left as they are)."""
    rows = mention_rows(writes, by=by, known=known)
    EntityMention.objects.bulk_create(rows, ignore_conflicts=True)
    return rows


def mention_rows(
    writes: list[MentionWrite], *, by=None, known: dict[tuple[int, str], EntityAlias] | None = None
) -> list[EntityMention]:
    """`mentions_written` but the last insert: the entities not known yet are created, and the
    mention rows are returned for the caller to insert (with ON CONFLICT DO NOTHING, as
    `mentions_written` does) beside its other rows. `known`: `aliases_found` of (at least) the
    writes' `looked_up` pairs when the caller looked them up before (a write looks them up while
    the model computes its vectors); otherwise they are looked up here."""
    writes = [write for write in writes if write.keys or write.found or write.given]
    if not writes:
        return []
    if known is None:
        pairs: set[tuple[int, str]] = set()
        for write in writes:
            pairs |= looked_up(write.memory.scope_id, write.keys, write.found, write.given)
        known = aliases_found(pairs)

    # A mention goes to the entity that owns the name used, merged or not: reads resolve merges,
    # so undoing a merge gives back exactly what was said of each.
    def entity_of(scope_id: int, key: str) -> Entity | None:
        alias = known.get((scope_id, key))
        return alias.entity if alias is not None else None

    new: dict[tuple[int, str], _NewEntity] = {}
    # (memory, the key of its entity in its scope, source, the words used)
    wanted: list[tuple[Memory, tuple[int, str], str, str]] = []
    kinds: dict[int, str] = {}  # known entities of no kind yet that a writer gave one
    by_scope: dict[int, dict[str, str]] = {}
    for (scope_id, key), alias in known.items():
        by_scope.setdefault(scope_id, {})[key] = alias.alias
    for write in writes:
        scope_id, memory = write.memory.scope_id, write.memory
        for key, surface in dictionary_hits(write.keys, by_scope.get(scope_id, {})):
            wanted.append((memory, (scope_id, key), write.detected_source, surface))
        for found in write.found:
            if entity_of(scope_id, found.key) is None:
                new.setdefault(
                    (scope_id, found.key),
                    _NewEntity(scope_id, found.surface, found.kind, write.detected_source),
                )
            wanted.append((memory, (scope_id, found.key), write.detected_source, found.surface))
        for given in write.given:
            key = _given_wanted(write, given, entity_of, new, kinds)
            wanted.append((memory, (scope_id, key), write.given_source, given.name))
    _created(new, by)
    if kinds:
        for kind in set(kinds.values()):
            ids = [entity_id for entity_id, wanted_kind in kinds.items() if wanted_kind == kind]
            Entity.objects.filter(id__in=ids, kind=NAME).update(kind=kind)
    rows: dict[tuple[int, int, str], EntityMention] = {}
    for memory, entity_key, source, surface in wanted:
        entity = entity_of(*entity_key) or new[entity_key].entity
        if entity is None:
            continue
        rows.setdefault(
            (memory.id, entity.id, source),
            EntityMention(memory=memory, entity=entity, source=source, surface=surface[:200]),
        )
    return list(rows.values())


def _given_wanted(write: MentionWrite, given: GivenEntity, entity_of, new, kinds) -> str:
    """The key the given entity goes by in its scope: its name's, or the first of its aliases
    the scope knows (a writer naming "billing-svc" with the alias "billing service"), or its
    name's for a new entity. Aliases the scope does not know yet are added to it."""
    scope_id = write.memory.scope_id
    keys = [name_key(name) for name in (given.name, *given.aliases)]
    key = next((key for key in keys if entity_of(scope_id, key) is not None), keys[0])
    entity = entity_of(scope_id, key)
    if entity is None:
        spec = new.get((scope_id, key))
        if spec is None or spec.source != write.given_source:
            spec = new[(scope_id, key)] = _NewEntity(
                scope_id, given.name, given.kind or NAME, write.given_source
            )
        spec.aliases.extend(given.aliases)
        return key
    if given.kind and entity.kind == NAME:
        kinds[entity.id] = given.kind
    fresh = [
        alias
        for alias in (given.name, *given.aliases)
        if entity_of(scope_id, name_key(alias)) is None
    ]
    if fresh:
        # Aliases a writer gives an entity the scope already knows: added to it, first come.
        EntityAlias.objects.bulk_create(
            [
                EntityAlias(
                    entity=entity,
                    scope_id=scope_id,
                    alias=alias,
                    normalized=name_key(alias),
                    source=write.given_source,
                )
                for alias in dict.fromkeys(fresh)
            ],
            ignore_conflicts=True,
        )
    return key


# New entities and their aliases in one statement; it answers the aliases it inserted, so the
# names a concurrent write took first are the pairs it leaves out.
_CREATE = """
WITH made AS (
    INSERT INTO memories_entity (public_id, scope_id, kind, name, created_at)
    SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::timestamptz[])
    RETURNING id, public_id
)
INSERT INTO memories_entityalias (entity_id, scope_id, alias, normalized, source, created_by_id,
                                  created_at)
SELECT made.id, named.scope_id, named.alias, named.normalized, named.source, named.by, named.at
FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::bigint[],
            %s::timestamptz[])
     AS named(public_id, scope_id, alias, normalized, source, by, at)
JOIN made USING (public_id)
ON CONFLICT (scope_id, normalized) DO NOTHING
RETURNING entity_id, scope_id, normalized
"""


def _created(new: dict[tuple[int, str], _NewEntity], by) -> None:
    """Insert the new entities and their aliases (one statement); where a concurrent write took
    a name first, its entity is used and ours (referenced by nothing yet) is removed again."""
    if not new:
        return
    now = timezone.now()
    entities = {
        pair: Entity(
            public_id=new_public_id("ent"),
            scope_id=spec.scope_id,
            kind=spec.kind,
            name=spec.name,
            created_at=now,
        )
        for pair, spec in new.items()
    }
    named: dict[tuple[int, str], tuple[str, str, str]] = {}  # pair: entity, alias, source
    for (scope_id, key), spec in new.items():
        for alias in (spec.name, *spec.aliases):
            alias_key = name_key(alias)
            if alias_key == key or (scope_id, alias_key) not in new:
                named.setdefault(
                    (scope_id, alias_key),
                    (entities[(scope_id, key)].public_id, alias, spec.source),
                )
    columns = list(
        zip(
            *[(pid, sid, alias, key, source) for (sid, key), (pid, alias, source) in named.items()],
            strict=True,
        )
    )
    with connection.cursor() as cursor:
        cursor.execute(
            _CREATE,
            [
                [entity.public_id for entity in entities.values()],
                [entity.scope_id for entity in entities.values()],
                [entity.kind for entity in entities.values()],
                [entity.name for entity in entities.values()],
                [now] * len(entities),
                *[list(column) for column in columns],
                [by.pk if by is not None else None] * len(named),
                [now] * len(named),
            ],
        )
        inserted = {(scope_id, key): entity_id for entity_id, scope_id, key in cursor.fetchall()}
    lost = []
    for pair, spec in new.items():
        entity = entities[pair]
        if pair in inserted:
            entity.id = inserted[pair]
            spec.entity = entity
        else:
            lost.append(entity.public_id)
    if lost:
        owners = aliases_found({pair for pair in new if pair not in inserted})
        for pair, spec in new.items():
            if pair not in inserted:
                owner = owners.get(pair)
                spec.entity = owner.entity if owner is not None else None
        Entity.objects.filter(public_id__in=lost).delete()


def entities_ensured(
    *, scope_id: int, given: list[GivenEntity], source: str, by=None
) -> dict[str, Entity]:
    """These entities in the scope (an archive's, say): each found by its name or one of its
    aliases, or created with them; aliases the scope lacks are added. Returns each given name's
    key mapped to its entity (the one owning the name, merged or not)."""
    pairs = {(scope_id, name_key(name)) for item in given for name in (item.name, *item.aliases)}
    known = aliases_found(pairs)

    def entity_of(sid: int, key: str) -> Entity | None:
        alias = known.get((sid, key))
        return alias.entity if alias is not None else None

    new: dict[tuple[int, str], _NewEntity] = {}
    kinds: dict[int, str] = {}
    holder = MentionWrite(memory=Memory(scope_id=scope_id), keys={}, found=[], given_source=source)
    keys = {item.name: _given_wanted(holder, item, entity_of, new, kinds) for item in given}
    _created(new, by)
    for kind in set(kinds.values()):
        ids = [entity_id for entity_id, wanted_kind in kinds.items() if wanted_kind == kind]
        Entity.objects.filter(id__in=ids, kind=NAME).update(kind=kind)
    return {
        name_key(name): entity_of(scope_id, key) or new[(scope_id, key)].entity
        for name, key in keys.items()
        if entity_of(scope_id, key) or new[(scope_id, key)].entity
    }
