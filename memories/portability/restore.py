"""Import of an export into a scope: a write like any other, of many memories in one transaction.

Authority comes from the importing credential, as for every write: each memory is by the actor
(author kind, user, token, client), and an `import` provenance row records the import with what
the archive claimed (its id, author and times) in `claims`. The archive's own provenance rows
(verbatim phrases, authors as names) are kept as they were written, as claims. Times are the
import's unless a scope admin keeps the archive's (`keep_times`): then the memories, versions,
validity periods and review queue keep their times, which `as_of` answers by. The server
assigns every id (an archive's ids are mapped through the ledger, whatever exists elsewhere).
Kept as exported: canonical content, originals and languages (text that is not English is
queued for canonicalization as a remember would be), states, versions, supersede links and the
review queue with its actions. Computed on the way in, before the scope is locked: embeddings
(and windows) and the language.

The ledger (`ImportedMemory`) makes a second import of the same archive into the same scope
write nothing. A valid memory whose text the scope already holds is not written again: its
provenance joins the existing memory as absorbed writes, as deduplication does for a write.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from pydantic import BaseModel

from memories.canonical.language import detect_language
from memories.canonical.service import TRANSLATION
from memories.canonical.tasks import enqueue_canonicalization
from memories.embeddings import Embedded, embed_contents
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
    SourceKind,
    TranslationStatus,
    authenticated_author_kind,
)
from memories.portability import format as fmt
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
from zeromemory.core.actor import Actor

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


Model = TypeVar("Model", bound=BaseModel)


def _retimed(model: Model, at: Callable[[datetime], datetime]) -> Model:
    """The archive's item with every time in it passed through `at`."""
    update: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, datetime):
            update[name] = at(value)
        elif isinstance(value, BaseModel):
            update[name] = _retimed(value, at)
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            update[name] = [_retimed(item, at) for item in value]
    return model.model_copy(update=update)


@dataclass
class _Write:
    """One memory of the archive as this import writes it."""

    item: MemoryIn  # its times already the import's (or the archive's, kept)
    claimed: MemoryIn  # as the archive has it
    lang: str = ""
    status: str = TranslationStatus.SKIPPED
    original: str = ""
    embedded: Embedded | None = None


def _language(write: _Write) -> None:
    """The language as remember decides it: text that is not English waits for
    canonicalization; an English text keeps the archive's original and language."""
    item = write.item
    decision = detect_language(item.content)
    if decision.needs_translation:
        write.lang, write.status, write.original = decision.lang, TranslationStatus.PENDING, ""
    elif item.translation == TranslationStatus.DONE and item.original:
        write.lang, write.status, write.original = item.language, item.translation, item.original
    else:
        write.lang, write.status, write.original = decision.lang, TranslationStatus.SKIPPED, ""


def _memory_row(write: _Write, *, actor: Actor, scope: Scope) -> Memory:
    item = write.item
    return Memory(
        scope=scope,
        kind_id=item.kind,
        content=item.content,
        content_original=write.original,
        content_lang=write.lang,
        content_hash=content_hash(item.content),
        translation_status=write.status,
        author_kind=authenticated_author_kind(actor),
        agent_name=actor.client_name,
        created_by=actor.user,
        created_by_token=actor.token,
        embedding=write.embedded.vector,
        valid=item.state == "valid",
        forgotten_at=item.forgotten.at if item.forgotten else None,
        forgotten_reason=item.forgotten.reason if item.forgotten else "",
        superseded_at=item.superseded_at,
        restored_at=item.restored,
        created_at=item.created,
    )


def _claims(claimed: MemoryIn) -> dict[str, Any]:
    """What the archive said of a memory that this server does not take as its own."""
    return {
        "id": claimed.id,
        "author": claimed.author.model_dump(),
        "created": fmt.when(claimed.created),
        "updated": fmt.when(claimed.updated),
        "restored": fmt.when(claimed.restored),
    }


def _provenance_rows(
    write: _Write, memory_id: int, *, actor: Actor, now: datetime, absorbed: bool
) -> list[Provenance]:
    item, claimed = write.item, write.claimed
    rows = [
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
            claims={} if row.created == said.created else {"created": fmt.when(said.created)},
            created_at=row.created,
        )
        for row, said in zip(item.provenance, claimed.provenance, strict=True)
    ]
    # The import itself, by the importing credential.
    rows.append(
        Provenance(
            memory_id=memory_id,
            source_kind=SourceKind.IMPORT,
            absorbed=absorbed,
            client_name=actor.client_name,
            written_text=item.content if absorbed else "",
            claims=_claims(claimed),
            created_by=actor.user,
            created_by_token=actor.token,
            created_at=now,
        )
    )
    return rows


def _prepare(writes: list[_Write], held: set[str]) -> None:
    """Language and embeddings of the memories the scope does not hold yet (no lock is held)."""
    new = [w for w in writes if w.embedded is None and not _absorbs(w, held)]
    for write in new:
        _language(write)
    for write, embedded in zip(
        new, embed_contents([write.item.content for write in new]), strict=True
    ):
        write.embedded = embedded


def _absorbs(write: _Write, held: set[str]) -> bool:
    return write.item.state == "valid" and content_hash(write.item.content) in held


def _held(scope: Scope, writes: list[_Write]) -> dict[str, Memory]:
    """The scope's valid memories with the text of a valid memory of the archive, by hash."""
    return {
        memory.content_hash: memory
        for memory in Memory.objects.filter(
            scope=scope,
            valid=True,
            content_hash__in=[
                content_hash(w.item.content) for w in writes if w.item.state == "valid"
            ],
        ).only("id", "content_hash", "public_id")
    }


def _write_memories(
    actor: Actor, scope: Scope, writes: list[_Write], now: datetime
) -> tuple[dict[str, Memory], int]:
    """The new memories (by archive id) and how many were absorbed into existing ones."""
    held = _held(scope, writes)
    _prepare(writes, set(held))  # what the scope stopped holding since the first look (rare)
    created: dict[str, Memory] = {}
    provenance: list[Provenance] = []
    absorbed = 0
    claims = []
    hashes = set(held)
    for start in range(0, len(writes), EMBED_BATCH):
        batch = writes[start : start + EMBED_BATCH]
        new = [w for w in batch if not _absorbs(w, hashes)]
        for write in batch:
            if _absorbs(write, hashes):
                absorbed += 1
                target = held[content_hash(write.item.content)]
                created[write.item.id] = target
                provenance += _provenance_rows(
                    write, target.id, actor=actor, now=now, absorbed=True
                )
        rows = [_memory_row(write, actor=actor, scope=scope) for write in new]
        claims += [
            (row, TRANSLATION.new_claim(row))
            for row in rows
            if row.translation_status == TranslationStatus.PENDING
        ]
        Memory.objects.bulk_create(rows)
        MemoryWindow.objects.bulk_create(
            window
            for row, write in zip(rows, new, strict=True)
            for window in window_rows(memory=row, embedded=write.embedded)
        )
        for write, row in zip(new, rows, strict=True):
            row.updated_at = write.item.updated
            row.imported = True
            created[write.item.id] = row
            provenance += _provenance_rows(write, row.id, actor=actor, now=now, absorbed=False)
        Memory.objects.bulk_update(rows, ["updated_at"])
    Provenance.objects.bulk_create(provenance, batch_size=1000)
    for row, claim in claims:
        transaction.on_commit(partial(enqueue_canonicalization, memory_id=row.id, claim=claim))
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
        _Write(
            item=_retimed(memory, at)
            if keep_times
            else _retimed(memory, at).model_copy(update={"validity": [], "restored": None}),
            claimed=memory,
        )
        for memory in sorted(archive.memories, key=lambda memory: memory.id)
    ]
    conflicts = [_retimed(conflict, at) for conflict in archive.conflicts]
    ids = [w.item.id for w in writes]
    # The slow part (embedding) before the transaction: the scope row is locked only to write.
    earlier = set(_ledger(scope, ids))
    _prepare([w for w in writes if w.item.id not in earlier], set(_held(scope, writes)))
    try:
        with transaction.atomic():
            # Two imports into one scope run one after the other, so the ledger check holds.
            Scope.objects.select_for_update().filter(pk=scope.pk).first()
            done = set(_ledger(scope, ids))
            fresh = [w for w in writes if w.item.id not in done]
            if not fresh:
                return ImportResult(imported=0, absorbed=0, skipped=len(done), conflicts=0)
            created, absorbed = _write_memories(actor, scope, fresh, now)
            items = [w.item for w in fresh]
            _write_links(scope, items, created)
            write_validity(items, created)
            written = _write_conflicts(scope, conflicts, created)
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
