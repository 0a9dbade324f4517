"""The memories of an import as rows: written by the importing actor, the archive's words kept as
claims (see `memories.portability.archive_import`).

Each memory is by the actor (author kind, user, token, client), with its language decided as
remember decides it; its provenance is the archive's rows as they were written (their times
the import's unless kept, the archive's then in `claims`) and one `import` row by the actor
whose `claims` hold what the archive said of the memory: its id, author and times.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from memories.canonical.content import (
    Derived,
    content_hash,
    content_set,
    derived_text,
    derived_translation,
    embed_derived,
    translations_queued,
    window_rows,
)
from memories.models import (
    Memory,
    MemoryWindow,
    Provenance,
    SourceKind,
    TranslationStatus,
    authenticated_author_kind,
)
from memories.portability import format as fmt
from memories.portability.incoming import MemoryIn
from memories.portability.periods import validity_bounds
from scopes.models import Scope
from zeromemory.core.actor import Actor

WRITE_BATCH = 256  # memories per INSERT (their embeddings are computed before)


Model = TypeVar("Model", bound=BaseModel)


def retimed(model: Model, at: Callable[[datetime], datetime]) -> Model:
    """The archive's item with every time in it passed through `at`."""
    update: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, datetime):
            update[name] = at(value)
        elif isinstance(value, BaseModel):
            update[name] = retimed(value, at)
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            update[name] = [retimed(item, at) for item in value]
    return model.model_copy(update=update)


@dataclass
class MemoryWrite:
    """One memory of the archive as this import writes it."""

    item: MemoryIn  # its times already the import's (or the archive's, kept)
    claimed: MemoryIn  # as the archive has it
    derived: Derived | None = None  # what its text derives, once `prepare_writes` looked
    # What the import's provenance row claims, when the memory came from another system's file
    # (its system, ids and times) rather than from an archive of ours.
    claims: dict[str, Any] | None = None


def _derived(item: MemoryIn) -> Derived:
    """The text's facts as remember decides them: text that is not English waits for
    canonicalization; an English text keeps the archive's original and language."""
    derived = derived_text(item.content)
    if (
        derived.translation_status == TranslationStatus.SKIPPED
        and item.translation == TranslationStatus.DONE
        and item.original
    ):
        return derived_translation(item.content, original=item.original, lang=item.language)
    return derived


def _memory_row(write: MemoryWrite, *, actor: Actor, scope: Scope) -> Memory:
    item = write.item
    memory = Memory(
        scope=scope,
        kind_id=item.kind,
        author_kind=authenticated_author_kind(actor),
        agent_name=actor.client_name,
        created_by=actor.user,
        created_by_token=actor.token,
        forgotten_at=item.forgotten.at if item.forgotten else None,
        forgotten_reason=item.forgotten.reason if item.forgotten else "",
        superseded_at=item.superseded_at,
        restored_at=item.restored,
        created_at=item.created,
    )
    content_set(memory, write.derived)
    validity_bounds(memory, item)
    return memory


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
    write: MemoryWrite, memory_id: int, *, actor: Actor, now: datetime, absorbed: bool
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
            claims=write.claims if write.claims is not None else _claims(claimed),
            created_by=actor.user,
            created_by_token=actor.token,
            created_at=now,
        )
    )
    return rows


def prepare_writes(writes: list[MemoryWrite], held: set[str]) -> None:
    """Language and embeddings of the memories the scope does not hold yet (no lock is held)."""
    new = [w for w in writes if w.derived is None and not _absorbs(w, held)]
    for write in new:
        write.derived = _derived(write.item)
    embed_derived([write.derived for write in new])


def _absorbs(write: MemoryWrite, held: set[str]) -> bool:
    return write.item.state == "valid" and content_hash(write.item.content) in held


def held_by_text(scope: Scope, writes: list[MemoryWrite]) -> dict[str, Memory]:
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


def write_memories(
    actor: Actor, scope: Scope, writes: list[MemoryWrite], now: datetime
) -> tuple[dict[str, Memory], int]:
    """The new memories (by archive id) and how many were absorbed into existing ones."""
    held = held_by_text(scope, writes)
    prepare_writes(writes, set(held))  # what the scope stopped holding since the first look (rare)
    created: dict[str, Memory] = {}
    provenance: list[Provenance] = []
    absorbed = 0
    translations = []
    hashes = set(held)
    for start in range(0, len(writes), WRITE_BATCH):
        batch = writes[start : start + WRITE_BATCH]
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
        Memory.objects.bulk_create(rows)
        MemoryWindow.objects.bulk_create(
            window
            for row, write in zip(rows, new, strict=True)
            for window in window_rows(memory=row, derived=write.derived)
        )
        for write, row in zip(new, rows, strict=True):
            row.updated_at = write.item.updated
            row.imported = True
            created[write.item.id] = row
            provenance += _provenance_rows(write, row.id, actor=actor, now=now, absorbed=False)
        Memory.objects.bulk_update(rows, ["updated_at"])
        translations += rows
    Provenance.objects.bulk_create(provenance, batch_size=1000)
    translations_queued(translations)
    return created, absorbed
