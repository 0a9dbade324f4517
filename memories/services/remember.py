"""remember(): the one write path every surface uses (REST, MCP, dashboard, ingest).

In order: the content guard refuses secrets; validation (text, size, kind, writable scope);
language detection; an identical valid memory in the scope absorbs the write (a provenance row,
no new memory); otherwise embed, look for near duplicates (cosine >= 0.92), insert with provenance,
and enqueue canonicalization on commit when the text is not English. A memory capture holds for
review is inserted forgotten, with an item in its scope's review queue. A partial unique index on
(scope, content hash) among valid memories makes two racing identical writes one memory.

There is one algorithm, for a batch (a single remember is a batch of one): each step is one query
for the whole batch. When a concurrent write took the same text or key first, the batch is run
again item by item, and each item then absorbs into (or replays) what the other writer committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from memories.activity.logged import logs_remember
from memories.canonical.service import TRANSLATION
from memories.canonical.tasks import enqueue_canonicalization
from memories.embeddings import embed_contents
from memories.models import (
    Conflict,
    ConflictStatus,
    IdempotencyRecord,
    Memory,
    MemoryWindow,
    Provenance,
    Relation,
    TranslationStatus,
)
from memories.records import memories_confirmed, new_memory_state, validity_written, window_rows
from memories.services import duplicates, idempotency
from memories.services.remember_input import Prepared, RememberInput, prepare, refuse_nul, scope_for
from scopes import access
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError, ValidationFailed

__all__ = ["RememberInput", "RememberResult", "memory_remember", "memory_remember_many"]


@dataclass
class RememberResult:
    memory: Memory
    deduplicated: bool
    similar_existing: list[duplicates.SimilarMemory] = field(default_factory=list)
    replayed: bool = False
    rendered: dict[str, Any] | None = None  # a replay: what the first request was answered

    @property
    def created(self) -> bool:
        return not self.deduplicated


# How the caller answers a result; the idempotency record keeps it, and a replay answers it again.
Render = Callable[[RememberResult], dict[str, Any]]


@dataclass
class BatchItemResult:
    result: RememberResult | None = None
    error: DomainError | None = None


def memory_remember(
    *, actor: Actor, request: RememberInput, render: Render | None = None
) -> RememberResult:
    """Remember one memory; raises DomainError for bad input or access."""
    [item] = memory_remember_many(actor=actor, requests=[request], render=render)
    if item.error is not None:
        raise item.error
    return item.result


def _replayed(answer: dict[str, Any]) -> RememberResult:
    memory = Memory.objects.select_related("scope").get(public_id=answer["id"])
    similar = [duplicates.SimilarMemory(**item) for item in answer.get("similar_existing", [])]
    return RememberResult(
        memory=memory,
        deduplicated=answer["deduplicated"],
        similar_existing=similar,
        replayed=True,
        rendered=answer,
    )


def _new_memory(actor: Actor, prepared: Prepared) -> Memory:
    held = prepared.request.held_reason
    return Memory(
        **new_memory_state(held=bool(held)),
        forgotten_reason=held,
        scope=prepared.scope,
        kind_id=prepared.request.kind,
        content=prepared.content,
        content_lang=prepared.lang,
        content_hash=prepared.content_hash,
        translation_status=prepared.status,
        author_kind=prepared.author_kind,
        agent_name=actor.client_name,
        created_by=actor.user,
        created_by_token=actor.token,
        embedding=prepared.embedded.vector,
    )


def _provenance_row(actor: Actor, prepared: Prepared, memory: Memory, *, absorbed: bool):
    request = prepared.request
    return Provenance(
        memory=memory,
        source_kind=request.source_kind,
        absorbed=absorbed,
        client_name=actor.client_name,
        conversation_id=request.conversation_id,
        source_path=request.source_path,
        chunk_hash=request.chunk_hash,
        chunk_id=request.chunk_id,
        verbatim=prepared.verbatim,
        written_text=prepared.content if absorbed and prepared.content != memory.content else "",
        created_by=actor.user,
        created_by_token=actor.token,
    )


def _commit(
    actor: Actor,
    prepared: dict[int, Prepared],
    items: list[BatchItemResult],
    stale: list[int],
    render: Render | None,
) -> None:
    """The whole batch in a few statements; raises IntegrityError when a concurrent write won."""
    existing = duplicates.identical_many(list(prepared.values()))
    first_of: dict[tuple[int, str], int] = {}
    fresh: dict[int, Prepared] = {}
    for index, item in prepared.items():
        key = (item.scope.id, item.content_hash)
        if key not in existing and key not in first_of:
            first_of[key] = index
            fresh[index] = item
    unembedded = [index for index, item in fresh.items() if item.embedded is None]
    vectors = embed_contents([fresh[index].content for index in unembedded])
    for index, embedded in zip(unembedded, vectors, strict=True):
        fresh[index].embedded = embedded
    similar = duplicates.near_many(fresh)
    absorbing = {
        index: similar[index][0].id
        for index, item in fresh.items()
        if similar[index] and item.request.absorb_similar
    }
    nearest = Memory.objects.select_related("scope").in_bulk(
        set(absorbing.values()), field_name="public_id"
    )
    targets = {index: nearest[public_id] for index, public_id in absorbing.items()}
    for index in targets:
        del first_of[(fresh[index].scope.id, fresh[index].content_hash)]
        del fresh[index]
    created = {index: _new_memory(actor, item) for index, item in fresh.items()}
    # The translation's claim goes in with the row: an UPDATE of the rows just inserted would
    # write each one again, its vector into the HNSW index a second time.
    claimed = [
        (memory, TRANSLATION.new_claim(memory))
        for memory in created.values()
        if memory.translation_status == TranslationStatus.PENDING
    ]
    with transaction.atomic():
        Memory.objects.bulk_create(created.values())  # sets each object's id
        claims = {memory.id: claim for memory, claim in claimed}
        MemoryWindow.objects.bulk_create(
            row
            for index, item in fresh.items()
            for row in window_rows(memory=created[index], embedded=item.embedded)
        )
        provenance = []
        for index, item in prepared.items():
            key = (item.scope.id, item.content_hash)
            if index in created:
                memory, absorbed = created[index], False
                result = RememberResult(memory, False, similar_existing=similar[index])
            else:
                memory = targets.get(index) or existing.get(key) or created[first_of[key]]
                absorbed = True
                result = RememberResult(memory, True)
            provenance.append(_provenance_row(actor, item, memory, absorbed=absorbed))
            items[index].result = result
        Provenance.objects.bulk_create(provenance)
        validity_written(memories=list(created.values()), by=actor.user)
        memories_confirmed(ids={row.memory.pk for row in provenance if row.absorbed})
        Conflict.objects.bulk_create(
            Conflict(
                scope=memory.scope,
                memory_a=memory,
                status=ConflictStatus.OPEN,
                verdict=Relation.HELD,
                rationale=fresh[index].request.held_reason,
            )
            for index, memory in created.items()
            if fresh[index].request.held_reason
        )
        if stale:
            IdempotencyRecord.objects.filter(id__in=stale).delete()
        IdempotencyRecord.objects.bulk_create(
            idempotency.new_record(
                actor=actor,
                request=item.request,
                answer=render(items[index].result),
            )
            for index, item in prepared.items()
            if item.request.idempotency_key
        )
        for memory_id, claim in claims.items():
            transaction.on_commit(
                partial(enqueue_canonicalization, memory_id=memory_id, claim=claim)
            )


def _commit_each(
    actor: Actor,
    prepared: dict[int, Prepared],
    items: list[BatchItemResult],
    stale: list[int],
    render: Render | None,
) -> None:
    """After a lost race: the same algorithm item by item, now seeing what the winner wrote."""
    for index, item in prepared.items():
        items[index].result = None
        try:
            key = item.request.idempotency_key
            answer = idempotency.Replays.load(actor, [key]).answer(item.request) if key else None
            if answer is not None:
                items[index].result = _replayed(answer)
                continue
            try:
                _commit(actor, {index: item}, items, stale, render)
            except IntegrityError:
                if key:  # the key was taken by a request whose answer this caller cannot read
                    raise idempotency.key_conflict() from None
                raise
        except DomainError as exc:
            items[index].result, items[index].error = None, exc


@logs_remember
def memory_remember_many(
    *, actor: Actor, requests: list[RememberInput], render: Render | None = None
) -> list[BatchItemResult]:
    """Remember several memories; each succeeds or fails on its own. Embeds in one batch.

    `render` is how the caller answers a result: a request under an idempotency key needs it (its
    record keeps the rendering, and its retry is answered the same)."""
    access.require_write_access(actor)
    items = [BatchItemResult(error=refuse_nul(request)) for request in requests]
    keys = [
        request.idempotency_key
        for request, item in zip(requests, items, strict=True)
        if request.idempotency_key and item.error is None
    ]
    replays = idempotency.Replays.load(actor, keys)
    prepared: dict[int, Prepared] = {}
    scopes: dict[str, Scope | DomainError] = {}
    seen_keys: set[str] = set()
    for index, request in enumerate(requests):
        if items[index].error is not None:
            continue
        key = request.idempotency_key
        try:
            answer = replays.answer(request)
            if answer is not None:
                items[index].result = _replayed(answer)
                continue
            if key and key in seen_keys:
                raise ValidationFailed(
                    "idempotency_key", _("The same idempotency key appears twice in this batch.")
                )
            prepared[index] = prepare(actor, request, scope_for(actor, request, scopes))
            if key:
                seen_keys.add(key)
        except DomainError as exc:
            items[index].error = exc
    if not prepared:
        return items
    stale = replays.stale_ids(seen_keys)
    try:
        _commit(actor, prepared, items, stale, render)
    except IntegrityError:
        _commit_each(actor, prepared, items, stale, render)
    return items
