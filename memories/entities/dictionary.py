"""The dictionary match: which of a scope's entities a text names, by its names and aliases.

A text is cut into its word n-grams (`names.text_keys`); together with what the detector found,
they are looked up in one indexed query of `EntityAlias` (unique per scope and key), and each
alias resolves to its entity, following merges. The write path (`mentions.mentions_written`) and
the read path (`entities_named`, for recall) share it; neither calls an LLM.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from django.db import connections, router

from memories.entities.detect import scanned
from memories.entities.names import MAX_MERGE_HOPS, dictionary_hits, text_keys
from memories.models import Entity, EntityAlias
from zeromemory.core import prepared


@cache
def _aliases_statement() -> str:
    """The aliases of some keys in some scopes with their entities: what the ORM's
    `select_related("entity")` reads, as one statement written once (the ORM compiling the query
    on every write took longer than the indexed lookup ran). The columns are the models' own."""
    columns = [f'a."{f.column}"' for f in EntityAlias._meta.concrete_fields]
    columns += [f'e."{f.column}"' for f in Entity._meta.concrete_fields]
    return (
        f"SELECT {', '.join(columns)}"  # noqa: S608 - the models' names; the keys are values
        f' FROM "{EntityAlias._meta.db_table}" a JOIN "{Entity._meta.db_table}" e'
        ' ON e."id" = a."entity_id"'
        ' WHERE a."scope_id" = ANY(%s::bigint[]) AND a."normalized" = ANY(%s::text[])'
    )


def aliases_found(pairs: set[tuple[int, str]]) -> dict[tuple[int, str], EntityAlias]:
    """The alias rows of these (scope id, key) pairs that exist, with their entities: one query
    (prepared on the connection, `zeromemory.core.prepared`)."""
    if not pairs:
        return {}
    scope_ids = sorted({scope_id for scope_id, _ in pairs})
    keys = sorted({key for _, key in pairs})  # an array: a text's hundred n-grams are one value
    alias = router.db_for_read(EntityAlias)
    with connections[alias].cursor() as cursor:
        prepared.execute(cursor, _aliases_statement(), [scope_ids, keys])
        rows = cursor.fetchall()
    alias_fields = [f.attname for f in EntityAlias._meta.concrete_fields]
    entity_fields = [f.attname for f in Entity._meta.concrete_fields]
    split = len(alias_fields)
    found = {}
    for row in rows:
        entry = EntityAlias.from_db(alias, alias_fields, row[:split])
        if (entry.scope_id, entry.normalized) in pairs:
            entry.entity = Entity.from_db(alias, entity_fields, row[split:])
            found[(entry.scope_id, entry.normalized)] = entry
    return found


def resolved(entities: Iterable[Entity]) -> dict[int, Entity]:
    """Each entity's id mapped to the entity it stands for now: itself, or the survivor of the
    merges that folded it (one more query per hop not already in hand, usually none)."""
    known = {entity.id: entity for entity in entities}
    for _ in range(MAX_MERGE_HOPS):
        missing = {
            entity.merged_into_id
            for entity in known.values()
            if entity.merged_into_id and entity.merged_into_id not in known
        }
        if not missing:
            break
        known.update(Entity.objects.in_bulk(missing))
    answer = {}
    for entity_id, entity in known.items():
        current, hops = entity, 0
        while current.merged_into_id and current.merged_into_id in known and hops < MAX_MERGE_HOPS:
            current, hops = known[current.merged_into_id], hops + 1
        answer[entity_id] = current
    return answer


def lookup_keys(text: str) -> dict[str, str]:
    """The keys a text is looked up under in the dictionary (its n-grams outside the spans the
    detector took by shape, and what the detector found), each with the words the text used."""
    found_in_text, prose = scanned(text)
    keys = text_keys(prose)
    for found in found_in_text:
        keys.setdefault(found.key, found.surface)
    return keys


def query_keys(text: str) -> tuple[list[str], list[bool]]:
    """`lookup_keys` as two arrays for recall's statement, which matches them against the
    aliases itself: the keys, and for each whether its words are a plain lower-case word (one
    that matches no capitalised one-word alias, as `dictionary_hits` has it)."""
    keys = lookup_keys(text)
    plain = [
        " " not in key and surface.isalpha() and surface.islower() for key, surface in keys.items()
    ]
    return list(keys), plain


def entities_named(*, scope_ids: Iterable[int], text: str) -> list[Entity]:
    """The entities of these scopes that `text` names (a query, as sent), by one dictionary
    match; the caller passes scopes the access module gave it. Each entity once, merged ones
    resolved to their survivor."""
    scope_ids = set(scope_ids)
    keys = lookup_keys(text)
    found = aliases_found({(scope_id, key) for scope_id in scope_ids for key in keys})
    by_scope: dict[int, dict[str, str]] = {}
    for (scope_id, key), alias in found.items():
        by_scope.setdefault(scope_id, {})[key] = alias.alias
    named = [
        found[(scope_id, key)].entity
        for scope_id, aliases in by_scope.items()
        for key, _ in dictionary_hits(keys, aliases)
    ]
    current = resolved(named)
    return list({current[entity.id].id: current[entity.id] for entity in named}.values())
