"""Import of an export into a scope: the memories as they were, written in one transaction.

Kept as exported: canonical content, originals and languages, verbatim phrases and the rest of
provenance (the authors as names: the importing user is recorded as the author of nothing),
states, times, versions, supersede links and the review queue with its actions. Computed on
the way in: embeddings (and windows) and the full-text vector. A memory keeps its id when the
id is free on this server, else it gets a new one.

The ledger (`ImportedMemory`) makes a second import of the same archive into the same scope
write nothing. A valid memory whose text the scope already holds is not written again: its
provenance joins the existing memory as absorbed writes, as deduplication does for a write.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from memories.embeddings import embed_contents
from memories.models import (
    Conflict,
    ConflictAction,
    ImportedMemory,
    Memory,
    MemoryVersion,
    MemoryWindow,
    Provenance,
    Relation,
    Resolution,
)
from memories.portability.archive import (
    Archive,
    BadArchive,
    ConflictIn,
    MemoryIn,
    check_references,
)
from memories.portability.periods import write_validity
from memories.records import content_hash, window_rows
from scopes.models import Scope

EMBED_BATCH = 256
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


def _memory_row(item: MemoryIn, *, scope: Scope, public_id: str, vector: list[float]) -> Memory:
    return Memory(
        public_id=public_id,
        scope=scope,
        kind_id=item.kind,
        content=item.content,
        content_original=item.original,
        content_lang=item.language,
        content_hash=content_hash(item.content),
        translation_status=item.translation,
        author_kind=item.author.kind,
        agent_name=item.author.client,
        embedding=vector,
        valid=item.state == "valid",
        forgotten_at=item.forgotten.at if item.forgotten else None,
        forgotten_reason=item.forgotten.reason if item.forgotten else "",
        superseded_at=item.superseded_at,
        restored_at=item.restored,
        created_at=item.created,
    )


def _provenance_rows(item: MemoryIn, memory_id: int, *, absorbed: bool) -> list[Provenance]:
    return [
        Provenance(
            memory_id=memory_id,
            source_kind=row.source,
            absorbed=row.absorbed or absorbed,
            author_name=row.author,
            client_name=row.client,
            conversation_id=row.conversation,
            source_path=row.path,
            chunk_hash=row.chunk_hash,
            verbatim=row.verbatim,
            written_text=row.written_text or (item.content if absorbed else ""),
            created_at=row.created,
        )
        for row in item.provenance
    ]


def _write_memories(scope: Scope, fresh: list[MemoryIn]) -> tuple[dict[str, Memory], int]:
    """The new memories (by archive id) and how many were absorbed into existing ones."""
    taken = set(
        Memory.objects.filter(public_id__in=[m.id for m in fresh]).values_list(
            "public_id", flat=True
        )
    )
    held = {
        memory.content_hash: memory
        for memory in Memory.objects.filter(
            scope=scope,
            valid=True,
            content_hash__in=[content_hash(m.content) for m in fresh if m.state == "valid"],
        ).only("id", "content_hash", "public_id")
    }
    created: dict[str, Memory] = {}
    provenance: list[Provenance] = []
    absorbed = 0
    for start in range(0, len(fresh), EMBED_BATCH):
        batch = fresh[start : start + EMBED_BATCH]
        new = [m for m in batch if m.state != "valid" or content_hash(m.content) not in held]
        new_ids = {m.id for m in new}
        for item in batch:
            if item.id not in new_ids:
                absorbed += 1
                target = held[content_hash(item.content)]
                created[item.id] = target
                provenance += _provenance_rows(item, target.id, absorbed=True)
        embedded = embed_contents([item.content for item in new])
        rows = [
            _memory_row(
                item,
                scope=scope,
                public_id=Memory._meta.get_field("public_id").get_default()
                if item.id in taken
                else item.id,
                vector=vectors.vector,
            )
            for item, vectors in zip(new, embedded, strict=True)
        ]
        Memory.objects.bulk_create(rows)
        MemoryWindow.objects.bulk_create(
            window
            for row, vectors in zip(rows, embedded, strict=True)
            for window in window_rows(memory=row, embedded=vectors)
        )
        for item, row in zip(new, rows, strict=True):
            row.updated_at = item.updated
            row.imported = True
            created[item.id] = row
            provenance += _provenance_rows(item, row.id, absorbed=False)
        Memory.objects.bulk_update(rows, ["updated_at"])
    Provenance.objects.bulk_create(provenance, batch_size=1000)
    return created, absorbed


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


def _write_conflicts(scope: Scope, conflicts: list[ConflictIn], created: dict[str, Memory]) -> int:
    written = 0
    taken = set(
        Conflict.objects.filter(public_id__in=[c.id for c in conflicts]).values_list(
            "public_id", flat=True
        )
    )
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
            **({} if item.id in taken else {"public_id": item.id}),
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


def archive_import(*, scope: Scope, archive: Archive) -> ImportResult:
    """Write the archive's memories into `scope` (which the caller may write), or nothing."""
    check_references(archive)
    memories = sorted(archive.memories, key=lambda memory: memory.id)
    try:
        with transaction.atomic():
            # Two imports into one scope run one after the other, so the ledger check holds.
            Scope.objects.select_for_update().filter(pk=scope.pk).first()
            done = set(
                ImportedMemory.objects.filter(
                    scope=scope, origin_id__in=[m.id for m in memories]
                ).values_list("origin_id", flat=True)
            )
            fresh = [memory for memory in memories if memory.id not in done]
            if not fresh:
                return ImportResult(imported=0, absorbed=0, skipped=len(done), conflicts=0)
            created, absorbed = _write_memories(scope, fresh)
            _write_links(scope, fresh, created)
            write_validity(fresh, created)
            conflicts = _write_conflicts(scope, archive.conflicts, created)
            ImportedMemory.objects.bulk_create(
                (
                    ImportedMemory(scope=scope, origin_id=item.id, memory=created[item.id])
                    for item in fresh
                ),
                batch_size=1000,
            )
    except IntegrityError:
        raise BadArchive(_("The archive contradicts itself (the same text valid twice).")) from None
    return ImportResult(
        imported=len(fresh) - absorbed, absorbed=absorbed, skipped=len(done), conflicts=conflicts
    )
