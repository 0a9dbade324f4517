"""Import of an export into a scope: a write like any other, of many memories in one transaction.

Authority comes from the importing credential, as for every write: each memory is by the actor
(author kind, user, token, client), and an `import` provenance row records the import with what
the archive claimed (its id, author and times) in `claims`. The archive's own provenance rows
(verbatim phrases, authors as names) are kept as they were written, as claims. Times are the
import's unless a scope admin keeps the archive's (`keep_times`): then the memories, versions,
validity periods and review queue keep their times, which `as_of` answers by. The server
assigns every id (an archive's ids are mapped through the ledger, whatever exists elsewhere).
Kept as exported: canonical content, originals and languages (text that is not English is
queued for canonicalization as a remember would be), states, versions, supersede links, typed
links (made by the importer, removed ones kept removed) and the review queue with its actions.
Computed on the way in, before the scope is locked: embeddings (and windows) and the language.

The ledger (`ImportedMemory`) makes a second import of the same archive into the same scope
write nothing. A valid memory whose text the scope already holds is not written again: its
provenance joins the existing memory as absorbed writes, as deduplication does for a write.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.entities.given import GivenEntity, given_leniently
from memories.entities.mentions import MentionWrite, entities_ensured, mentions_written
from memories.entities.names import name_key
from memories.entities.services import entity_merge
from memories.models import (
    Conflict,
    ConflictAction,
    ImportedMemory,
    Memory,
    MemoryLink,
    MemoryVersion,
    MentionSource,
    Relation,
    Resolution,
    authenticated_author_kind,
)
from memories.portability.archive import BadArchive, check_references
from memories.portability.imported import (
    MemoryWrite,
    held_by_text,
    prepare_writes,
    retimed,
    write_memories,
)
from memories.portability.incoming import Archive, ConflictIn, EntityIn, MemoryIn
from memories.portability.periods import write_validity
from scopes.models import Scope
from zeromemory.core.actor import Actor

# A pair is stored with A older than B (by primary key); an import that writes them the other
# way round swaps the pair and every A/B word with it.
_SWAP = {
    Relation.A_SUPERSEDES_B: Relation.B_SUPERSEDES_A,
    Relation.B_SUPERSEDES_A: Relation.A_SUPERSEDES_B,
    Resolution.FORGET_A: Resolution.FORGET_B,
    Resolution.FORGET_B: Resolution.FORGET_A,
}


@dataclass(frozen=True)
class ImportResult:
    imported: int  # memories written
    absorbed: int  # memories whose text the scope held already (provenance added there)
    skipped: int  # memories an earlier import of this archive wrote
    conflicts: int  # queue items written


def _write_links(scope: Scope, fresh: list[MemoryIn], created: dict[str, Memory]) -> None:
    superseded = []
    versions = []
    for item in fresh:
        row = created[item.id]
        if not getattr(row, "imported", False):
            continue
        if item.superseded_by is not None:
            # The other memory is this import's, or an earlier import's of the same archive.
            row.superseded_by = created.get(item.superseded_by) or (
                ImportedMemory.objects.get(scope=scope, origin_id=item.superseded_by).memory
            )
            superseded.append(row)
        versions += [
            MemoryVersion(
                memory=row,
                number=version.number,
                kind_id=version.kind,
                content=version.content,
                content_original=version.original,
                content_lang=version.language,
                created_at=version.created,
            )
            for version in item.versions
        ]
    Memory.objects.bulk_update(superseded, ["superseded_by"], batch_size=1000)
    MemoryVersion.objects.bulk_create(versions, batch_size=1000)


def _write_typed_links(
    actor: Actor, scope: Scope, fresh: list[MemoryIn], created: dict[str, Memory]
) -> None:
    """The typed links the imported memories make, removed ones too, by the importer (authority
    comes from the credential). A link of a memory the scope held already (absorbed) is left
    to the scope: its own links stand."""
    rows = []
    for item in fresh:
        source = created[item.id]
        if not getattr(source, "imported", False):
            continue
        for link in item.links:
            target = created.get(link.to) or (
                ImportedMemory.objects.get(scope=scope, origin_id=link.to).memory
            )
            if target.pk == source.pk:
                continue
            rows.append(
                MemoryLink(
                    scope=scope,
                    source=source,
                    target=target,
                    link_type=link.type,
                    author_kind=authenticated_author_kind(actor),
                    agent_name=actor.client_name[:120],
                    created_by=actor.user,
                    created_by_token=actor.token,
                    created_at=link.created,
                    removed_at=link.removed,
                    removed_by=actor.user if link.removed is not None else None,
                )
            )
    MemoryLink.objects.bulk_create(rows, batch_size=1000)


def _write_conflicts(scope: Scope, conflicts: list[ConflictIn], created: dict[str, Memory]) -> int:
    written = 0
    for item in conflicts:
        a = created.get(item.memory_a)
        b = created.get(item.memory_b) if item.memory_b else None
        # A pair whose memories this import did not write (an absorbed one, an earlier import)
        # is the scope's own queue's business already.
        if not all(getattr(m, "imported", False) for m in (a, b) if m is not None) or a is None:
            continue
        verdict, resolution = item.verdict, item.resolution
        if b is not None and a.id > b.id:
            a, b = b, a
            verdict, resolution = _SWAP.get(verdict, verdict), _SWAP.get(resolution, resolution)
        conflict = Conflict.objects.create(
            scope=scope,
            memory_a=a,
            memory_b=b,
            similarity=item.similarity,
            status=item.status,
            verdict=verdict,
            confidence=item.confidence,
            rationale=item.rationale,
            resolution=resolution,
            resolved_automatically=item.resolved_automatically,
            resolved_at=item.resolved_at,
            created_at=item.created,
            judged_at=item.judged,
        )
        ConflictAction.objects.bulk_create(
            ConflictAction(
                conflict=conflict,
                resolution=action.resolution,
                automatic=action.automatic,
                surface=action.surface,
                retired=created.get(action.retired) if action.retired else None,
                kept=created.get(action.kept) if action.kept else None,
                created_at=action.created,
                undone_at=action.undone_at,
            )
            for action in item.actions
        )
        written += 1
    return written


def _given(name: str, kind: str, aliases: list[str]) -> GivenEntity | None:
    """An archive's entity as a writer's, or None when it is not one this server keeps."""
    found = given_leniently([{"name": name, "kind": kind or None, "aliases": aliases[:10]}])
    if not found:
        found = given_leniently([{"name": name}])
    return found[0] if found else None


def _write_entities(
    actor: Actor, scope: Scope, entities: list[EntityIn], fresh: list[MemoryWrite], created
) -> None:
    """The archive's entities (with their aliases and standing merges) and its memories'
    mentions, in the scope; each new memory's text is read for entities as any write's is."""
    listed = [
        given
        for entity in entities
        if (given := _given(entity.name, entity.kind, entity.aliases)) is not None
    ]
    known = entities_ensured(
        scope_id=scope.id, given=listed, source=MentionSource.IMPORT, by=actor.user
    )
    for entity in entities:
        if entity.merged_into is None:
            continue
        merged = known.get(name_key(entity.name))
        survivor = known.get(name_key(entity.merged_into))
        if merged and survivor and merged.id != survivor.id and merged.merged_into_id is None:
            entity_merge(actor=actor, merged=merged, survivor=survivor)
    aliases = {name_key(entity.name): entity.aliases for entity in entities}
    writes = []
    for write in fresh:
        memory = created[write.item.id]
        if getattr(memory, "imported", False) and write.derived:
            writes.append(
                MentionWrite(
                    memory=memory,
                    keys=write.derived.entity_keys,
                    found=write.derived.entities_found,
                )
            )
        # The archive's mentions keep the source it names (who said the memory is about
        # what), an unknown one counting as the import's.
        by_source: dict[str, list[GivenEntity]] = {}
        for mention in write.item.entities:
            found = _given(mention.name, mention.kind, aliases.get(name_key(mention.name), []))
            if found is not None:
                source = mention.source
                if source not in MentionSource.values:
                    source = MentionSource.IMPORT
                by_source.setdefault(source, []).append(found)
        writes += [
            MentionWrite(memory=memory, keys={}, found=[], given=tuple(given), given_source=source)
            for source, given in by_source.items()
        ]
    mentions_written(writes, by=actor.user)


def archive_import(
    *,
    actor: Actor,
    scope: Scope,
    archive: Archive,
    keep_times: bool = False,
    budget: int | None = None,
) -> ImportResult:
    """Write the archive's memories into `scope` as `actor` (who may write it; administer it when
    `keep_times`), or nothing. `budget`: the most characters of text this import may embed (a
    request's; None for the command), past which the archive is refused before any work."""
    check_references(archive)
    if budget is not None and sum(len(m.content) for m in archive.memories) > budget:
        raise BadArchive(
            _(
                "The archive holds more than %(n)d characters of memories, more than one "
                "request embeds: split it, or import it with manage.py import_export."
            )
            % {"n": budget}
        )
    now = timezone.now()
    at = (lambda value: min(value, now)) if keep_times else (lambda value: now)
    writes = [
        MemoryWrite(
            item=retimed(memory, at)
            if keep_times
            else retimed(memory, at).model_copy(update={"validity": [], "restored": None}),
            claimed=memory,
        )
        for memory in sorted(archive.memories, key=lambda memory: memory.id)
    ]
    conflicts = [retimed(conflict, at) for conflict in archive.conflicts]
    ids = [w.item.id for w in writes]
    # The slow part (embedding) before the transaction: the scope row is locked only to write.
    earlier = set(_ledger(scope, ids))
    prepare_writes(
        [w for w in writes if w.item.id not in earlier], set(held_by_text(scope, writes))
    )
    try:
        with transaction.atomic():
            # Two imports into one scope run one after the other, so the ledger check holds.
            Scope.objects.select_for_update().filter(pk=scope.pk).first()
            done = set(_ledger(scope, ids))
            fresh = [w for w in writes if w.item.id not in done]
            if not fresh:
                return ImportResult(imported=0, absorbed=0, skipped=len(done), conflicts=0)
            created, absorbed = write_memories(actor, scope, fresh, now)
            items = [w.item for w in fresh]
            _write_links(scope, items, created)
            _write_typed_links(actor, scope, items, created)
            write_validity(items, created)
            written = _write_conflicts(scope, conflicts, created)
            _write_entities(actor, scope, archive.entities, fresh, created)
            ImportedMemory.objects.bulk_create(
                (
                    ImportedMemory(scope=scope, origin_id=item.id, memory=created[item.id])
                    for item in items
                ),
                batch_size=1000,
            )
    except IntegrityError:
        raise BadArchive(_("The archive contradicts itself (the same text valid twice).")) from None
    return ImportResult(
        imported=len(fresh) - absorbed, absorbed=absorbed, skipped=len(done), conflicts=written
    )


def _ledger(scope: Scope, ids: list[str]) -> list[str]:
    """Which of these archive ids an earlier import wrote into this scope."""
    return list(
        ImportedMemory.objects.filter(scope=scope, origin_id__in=ids).values_list(
            "origin_id", flat=True
        )
    )
