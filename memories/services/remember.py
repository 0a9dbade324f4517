"""remember(): the one write path every surface uses (REST, MCP, dashboard, ingest).

In order: the content guard refuses secrets; validation (NUL, text, size, kind, author, writable
scope); the model runs on the texts in another thread (`EmbeddedAhead`) while this one derives
what the texts give (hash, language, entities, from `memories.canonical.content`) and looks up
identical memories. A batch's model starts once every request is checked and authorized; a small
call's starts before its scope, content guard and kind are checked (`ahead_of_checks`), and a
request they refuse has its vector dropped. An identical valid memory in the scope absorbs the
write (a provenance row, no new memory, its vector unused); otherwise take the vectors as each
pass of the model ends, look for near duplicates (cosine >= 0.92) and insert that pass's
memories while the model works on the next, then provenance for all, and enqueue
canonicalization on commit when the text is not English. A memory capture holds for review is
inserted forgotten, with an item in its scope's review queue. A partial unique index on (scope,
content hash) among valid memories makes two racing identical writes one memory.

There is one algorithm, for a batch (a single remember is a batch of one): each step is one query
for the whole batch. When a concurrent write took the same text or key first, the batch is run
again item by item, and each item then absorbs into (or replays) what the other writer committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils.translation import gettext as _

from memories.activity.logged import logs_remember
from memories.canonical.content import (
    Derived,
    Mentioned,
    clean_content,
    content_hash,
    content_set,
    derived_text,
    embedded_in_passes,
    mention_rows_made,
    mentions_known,
    text_set,
    translations_queued,
    window_rows,
)
from memories.embeddings import SMALL_BATCH, EmbeddedAhead
from memories.entities.given import GivenEntity, given_entities
from memories.kinds import kind_for_slug
from memories.models import (
    AUTHOR_RANKS,
    AuthorKind,
    Conflict,
    ConflictStatus,
    EntityMention,
    IdempotencyRecord,
    Memory,
    MentionSource,
    Provenance,
    Relation,
    SourceKind,
    authenticated_author_kind,
)
from memories.services import duplicates, idempotency
from memories.state_rows import (
    memories_confirmed,
    new_memory_state,
    validity_rows,
    validity_rows_new,
)
from scopes import access
from scopes.models import Scope
from zeromemory.core import foreground
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets
from zeromemory.core.sql import (
    ids_taken,
    insert_with_ids,
    rows_inserted,
    rows_inserted_with_ids,
    rows_statements,
    sent_together,
)

__all__ = ["RememberInput", "RememberResult", "memory_remember", "memory_remember_many"]


@dataclass(frozen=True)
class RememberInput:
    content: str
    kind: str
    scope: str | None = None
    verbatim: str | None = None
    conversation_id: str = ""
    source_path: str = ""
    chunk_hash: str = ""
    idempotency_key: str | None = None
    absorb_similar: bool = False
    author_kind: str | None = None
    source_kind: str = SourceKind.REMEMBER
    chunk_id: int | None = None  # the captured chunk an extraction took this memory from
    # Capture's reason to hold the memory for review: it is stored forgotten, with a review item.
    held_reason: str = ""
    # What the memory is about, as its writer names it (names, or {name, kind, aliases}); checked
    # by `entities.given`. The text's own entities are found whatever this says.
    entities: Any = None


@dataclass
class Prepared:
    """One request, checked: its scope, its text as stored, the authority it is written with,
    and (once `derive` ran) what its text derives (`memories.canonical.content`)."""

    request: RememberInput
    scope: Scope
    text: str
    verbatim: str
    author_kind: str
    given: tuple[GivenEntity, ...] = ()
    derived: Derived = field(init=False)

    def derive(self) -> None:
        if not hasattr(self, "derived"):
            self.derived = derived_text(self.text)

    @cached_property
    def key(self) -> tuple[int, str]:
        """Two writes of one text into one scope are one memory (the hash `derive` gives the
        text, needed before it for the identical lookup)."""
        return (self.scope.id, content_hash(self.text))


_TEXT_FIELDS = (
    "content",
    "verbatim",
    "conversation_id",
    "source_path",
    "chunk_hash",
    "scope",
    "idempotency_key",
)


def refuse_nul(request: RememberInput) -> DomainError | None:
    """PostgreSQL text cannot hold NUL: refuse it before any query, naming the field."""
    for name in _TEXT_FIELDS:
        value = getattr(request, name)
        if isinstance(value, str) and "\x00" in value:
            return ValidationFailed(name, _("NUL characters are not allowed."))
    return None


def scope_for(actor: Actor, request: RememberInput, cache: dict) -> Scope:
    """The writable scope of a request, looked up once per batch."""
    key = request.scope or ""
    if key not in cache:
        try:
            cache[key] = (
                access.writable_scope(actor, request.scope)
                if request.scope
                else access.personal_scope(actor)
            )
        except DomainError as exc:
            cache[key] = exc.naming("scope") if request.scope else exc
    found = cache[key]
    if isinstance(found, DomainError):
        raise found
    return found


def _author_kind(actor: Actor, asked: str | None) -> str:
    """The author kind a write is stored with: the caller's own authority, or a lower one it
    asks for (an import of notes an agent wrote may say `capture`), never a higher one."""
    own = authenticated_author_kind(actor)
    if asked is None:
        return own
    if asked not in AuthorKind.values:
        raise ValidationFailed("author_kind", _("Unknown author kind."))
    if AUTHOR_RANKS[asked] > AUTHOR_RANKS[own]:
        raise ValidationFailed(
            "author_kind",
            _(
                "Authority comes from how you signed in: this write is by %(own)s and cannot "
                "claim to be by %(asked)s."
            )
            % {"own": own, "asked": asked},
        )
    return asked


def prepare(actor: Actor, request: RememberInput, scope: Scope) -> Prepared:
    refuse_secrets(
        {
            "content": request.content,
            "verbatim": request.verbatim,
            "conversation_id": request.conversation_id,
            "source_path": request.source_path,
            "chunk_hash": request.chunk_hash,
            "idempotency_key": request.idempotency_key,
        }
    )
    text = clean_content(request.content)
    kind_for_slug(request.kind)
    given = given_entities(request.entities)
    refuse_secrets(
        {"entities": " ".join(name for item in given for name in (item.name, *item.aliases))}
    )
    return Prepared(
        request=request,
        scope=scope,
        text=text,
        verbatim=(request.verbatim or "").strip(),
        author_kind=_author_kind(actor, request.author_kind),
        given=given,
    )


# Whose word a given entity is, by the door the write came through.
_GIVEN_SOURCE = {
    SourceKind.EXTRACTION: MentionSource.EXTRACTOR,
    SourceKind.IMPORT: MentionSource.IMPORT,
}


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
    *,
    actor: Actor,
    request: RememberInput,
    render: Render | None = None,
    started: EmbeddedAhead | None = None,
) -> RememberResult:
    """Remember one memory; raises DomainError for bad input or access. `started`: a pass begun
    before the request was checked (`memories.api.early_pass`), used if it embeds this text."""
    [item] = memory_remember_many(actor=actor, requests=[request], render=render, started=started)
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
    memory = Memory(
        **new_memory_state(held=bool(held)),
        forgotten_reason=held,
        scope=prepared.scope,
        kind_id=prepared.request.kind,
        author_kind=prepared.author_kind,
        agent_name=actor.client_name,
        created_by=actor.user,
        created_by_token=actor.token,
    )
    return memory


def _provenance_row(actor: Actor, prepared: Prepared, memory: Memory, *, absorbed: bool):
    request, text = prepared.request, prepared.derived.content
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
        written_text=text if absorbed and text != memory.content else "",
        created_by=actor.user,
        created_by_token=actor.token,
    )


def _commit(
    actor: Actor,
    prepared: dict[int, Prepared],
    items: list[BatchItemResult],
    stale: list[int],
    render: Render | None,
    ahead: EmbeddedAhead | None = None,
) -> None:
    """The whole batch in a few statements; raises IntegrityError when a concurrent write won."""
    # The transaction opens here, while the model computes the vectors: its BEGIN (a round trip
    # of its own) goes with the first lookup, not after the model.
    with transaction.atomic():
        existing = duplicates.identical_many(list(prepared.values()))
        # A small call derives its texts (language, entities) only now: the model's thread,
        # started just before, takes the interpreter while this one waits for the lookup, and
        # its pass begins at once rather than after that Python. A batch derived its texts
        # before, giving way between them.
        for item in prepared.values():
            item.derive()
        # The aliases the texts may name, looked up while the model still computes their
        # vectors (the request's thread would otherwise wait for it idle): every text's, whether
        # it ends new or absorbed, a superset of what `mention_rows_made` reads.
        known = mentions_known(
            [(item.scope.id, item.derived, item.given) for item in prepared.values()]
        )
        first_of: dict[tuple[int, str], int] = {}
        fresh: dict[int, Prepared] = {}
        for index, item in prepared.items():
            key = item.key
            if key not in existing and key not in first_of:
                first_of[key] = index
                fresh[index] = item
        # The new rows, made in the requests' order (their times sort as the requests came),
        # each given its text and vector once its pass of the model is done.
        rows = {index: _new_memory(actor, item) for index, item in fresh.items()}
        # A small call's rows are made while the model computes its vectors. A batch's are
        # not: that Python would run beside the model's passes, which need the interpreter
        # between their operators and slow down by about as much, and a batch's rows already
        # go in while the model works on its next pass.
        if len(prepared) >= SMALL_BATCH or any(
            item.request.absorb_similar for item in fresh.values()
        ):
            created = _written_after_lookup(
                actor, prepared, items, rows, existing, first_of, known, ahead
            )
        else:
            # Nothing is left to write after the memories' insert when every item is new and
            # none has an idempotency key: the insert's message commits (`near_then`).
            last = (
                len(fresh) == len(prepared)
                and not stale
                and not any(item.request.idempotency_key for item in prepared.values())
            )
            created = _written_ahead(
                actor, prepared, items, rows, existing, first_of, known, ahead, commits=last
            )
        memories_confirmed(ids=_absorbed_ids(prepared, items, created))
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
        translations_queued(list(created.values()))


def _absorbed_ids(
    prepared: dict[int, Prepared], items: list[BatchItemResult], created: dict[int, Memory]
) -> set[int]:
    """The memories this call's absorbed writes said again."""
    return {
        items[index].result.memory.pk
        for index in prepared
        if index not in created and items[index].result.deduplicated
    }


def _memory_of(
    index: int,
    item: Prepared,
    created: dict[int, Memory],
    existing: dict[tuple[int, str], Memory],
    first_of: dict[tuple[int, str], int],
    targets: dict[int, Memory],
) -> Memory:
    """The memory a request's write ends in: its new row, or the one that absorbed it (a
    near duplicate it asked to join, an identical stored one, or the same text earlier in the
    batch)."""
    if index in created:
        return created[index]
    return targets.get(index) or existing.get(item.key) or created[first_of[item.key]]


def _dependent_rows(
    actor: Actor,
    prepared: dict[int, Prepared],
    memories: dict[int, Memory],
    created: dict[int, Memory],
    known: dict,
) -> tuple[list[Provenance], list[EntityMention]]:
    """Each write's provenance, and what the memories are about: the new ones' texts, and what
    every writer named (an absorbed write's names join the memory that absorbed it). New
    entities are inserted here (`mention_rows_made`); the rows are the caller's to insert."""
    provenance = [
        _provenance_row(actor, item, memories[index], absorbed=index not in created)
        for index, item in prepared.items()
    ]
    mentions = mention_rows_made(
        [
            Mentioned(
                memory=memories[index],
                derived=item.derived,
                given=item.given,
                given_source=_GIVEN_SOURCE.get(item.request.source_kind, MentionSource.AGENT),
                detected=index in created,
            )
            for index, item in prepared.items()
            if index in created or item.given
        ],
        by=actor.user,
        known=known,
    )
    return provenance, mentions


def _held(fresh: dict[int, Prepared], created: dict[int, Memory]) -> list[Conflict]:
    """The review item of each new memory capture held back."""
    return [
        Conflict(
            scope=memory.scope,
            memory_a=memory,
            status=ConflictStatus.OPEN,
            verdict=Relation.HELD,
            rationale=fresh[index].request.held_reason,
        )
        for index, memory in created.items()
        if fresh[index].request.held_reason
    ]


def _written_ahead(
    actor: Actor,
    prepared: dict[int, Prepared],
    items: list[BatchItemResult],
    rows: dict[int, Memory],
    existing: dict[tuple[int, str], Memory],
    first_of: dict[tuple[int, str], int],
    known: dict,
    ahead: EmbeddedAhead | None,
    *,
    commits: bool,
) -> dict[int, Memory]:
    """A small call's write when no new item asks to be absorbed by a near duplicate: what is
    written does not depend on the near lookup's answer, so everything but the vectors is made
    while the model computes them (the memories' ids taken from their sequence, their
    provenance, validity, mentions and new entities, a held memory's review item, the memories'
    insert but its vectors); the rows that refer to the memories are sent then, and once the
    vectors are in, the memories' inserts go in one message, with the near lookup beside it or
    first in it (`duplicates.near_then`): either way it sees only the memories stored before this
    write. `commits`: the transaction has nothing to write after that message, which then
    commits it when it holds every memory's insert."""
    fresh = {index: prepared[index] for index in rows}
    for memory, pk in zip(rows.values(), ids_taken(Memory, len(rows)), strict=True):
        memory.id = pk
    for index, memory in rows.items():
        text_set(memory, fresh[index].derived)
    memories = {
        index: _memory_of(index, item, rows, existing, first_of, {})
        for index, item in prepared.items()
    }
    provenance, mentions = _dependent_rows(actor, prepared, memories, rows, known)
    # The rows that refer to the memories go in now, while the model still computes the
    # vectors, before the memories they refer to: their foreign keys are checked at COMMIT
    # (Django makes them DEFERRABLE INITIALLY DEFERRED), and no trigger or lookup of this write
    # reads them. What is left after the model is the near lookup and the memories' insert.
    with connection.cursor() as cursor:
        sent_together(
            cursor,
            rows_statements(
                provenance,
                mentions,
                validity_rows_new(memories=list(rows.values()), by=actor.user),
                _held(fresh, rows),
                conflicts_ignored=(EntityMention,),
            ),
        )
    # A small call's texts are one pass of the model: their insert is written now.
    whole = insert_with_ids(list(rows.values()), vectors_later={"embedding"}) if rows else None
    if whole is not None:
        whole.bound()
    similar: dict[int, list[duplicates.SimilarMemory]] = {}
    inserted: list[int] = []
    for group in embedded_in_passes({i: fresh[i].derived for i in fresh}, ahead=ahead):
        for index in group:
            rows[index].embedding = fresh[index].derived.embedded.vector
        literals = [fresh[index].derived.embedded.literal for index in group]
        if whole is not None and len(group) == len(rows):
            insert = whole
            insert.vectors_given("embedding", [fresh[i].derived.embedded.literal for i in rows])
        else:
            insert = insert_with_ids([rows[i] for i in group], vector_texts={"embedding": literals})
        windows = [
            row
            for index in group
            for row in window_rows(memory=rows[index], derived=fresh[index].derived)
        ]
        windows_insert = insert_with_ids(windows) if windows else None
        then = [(insert.sql, insert.params)]
        if windows_insert is not None:
            then.append((windows_insert.sql, windows_insert.params))
        found, answered = duplicates.near_then(
            {index: fresh[index] for index in group},
            besides=inserted,
            then=then,
            inserting=[rows[index].pk for index in group],
            commit=commits and insert is whole,
        )
        insert.rows_returned(answered[0])
        if windows_insert is not None:
            windows_insert.rows_returned(answered[1])
        similar.update(found)
        inserted.extend(rows[index].pk for index in group)
    for index in prepared:
        if index in rows:
            items[index].result = RememberResult(rows[index], False, similar[index])
        else:
            items[index].result = RememberResult(memories[index], True)
    return rows


def _written_after_lookup(
    actor: Actor,
    prepared: dict[int, Prepared],
    items: list[BatchItemResult],
    rows: dict[int, Memory],
    existing: dict[tuple[int, str], Memory],
    first_of: dict[tuple[int, str], int],
    known: dict,
    ahead: EmbeddedAhead | None,
) -> dict[int, Memory]:
    """A batch's write, or one where an item asks to be absorbed by a near duplicate (the near
    lookup then decides what is inserted): the rows are made after the lookup's answer."""
    fresh = {index: prepared[index] for index in rows}
    similar: dict[int, list[duplicates.SimilarMemory]] = {}
    created: dict[int, Memory] = {}
    # The model ran ahead while the lookups went on. Each group of texts its passes finish is
    # looked up and inserted while it works on the next (a batch of 100 short texts is two
    # passes); a group's near duplicates are those stored before the batch, not the rows of
    # its earlier groups.
    for group in embedded_in_passes({i: fresh[i].derived for i in fresh}, ahead=ahead):
        if not similar and len(prepared) >= SMALL_BATCH:
            foreground.give_way()  # a batch's statements wait for the requests in flight
        similar.update(
            duplicates.near_many(
                {index: fresh[index] for index in group},
                besides=[memory.pk for memory in created.values()],
            )
        )
        made = {
            index: rows[index]
            for index in group
            if not (similar[index] and fresh[index].request.absorb_similar)
        }
        for index, memory in made.items():
            # The translation's claim goes in with the row: an UPDATE of the rows just
            # inserted would write each one again, its vector into the HNSW index a second
            # time.
            content_set(memory, fresh[index].derived)
        # One statement of the same text for any batch, each vector the literal the
        # near-duplicate lookup sent (sets each object's id).
        rows_inserted_with_ids(
            list(made.values()),
            vector_texts={"embedding": [fresh[i].derived.embedded.literal for i in made]},
        )
        rows_inserted_with_ids(
            [
                row
                for index, memory in made.items()
                for row in window_rows(memory=memory, derived=fresh[index].derived)
            ]
        )
        created.update(made)
    created = {index: created[index] for index in fresh if index in created}
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
        del first_of[fresh[index].key]
    memories = {
        index: _memory_of(index, item, created, existing, first_of, targets)
        for index, item in prepared.items()
    }
    for index in prepared:
        if index in created:
            items[index].result = RememberResult(created[index], False, similar[index])
        else:
            items[index].result = RememberResult(memories[index], True)
    provenance, mentions = _dependent_rows(actor, prepared, memories, created, known)
    # Provenance, mentions and validity periods in one message: nothing reads their ids.
    rows_inserted(
        provenance,
        mentions,
        validity_rows(memories=list(created.values()), by=actor.user),
        conflicts_ignored=(EntityMention,),
    )
    Conflict.objects.bulk_create(_held(fresh, created))
    return created


def _commit_each(
    actor: Actor,
    prepared: dict[int, Prepared],
    items: list[BatchItemResult],
    stale: list[int],
    render: Render | None,
    ahead: EmbeddedAhead | None = None,
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
                _commit(actor, {index: item}, items, stale, render, ahead)
            except IntegrityError:
                if key:  # the key was taken by a request whose answer this caller cannot read
                    raise idempotency.key_conflict() from None
                raise
        except DomainError as exc:
            items[index].result, items[index].error = None, exc


@logs_remember
def memory_remember_many(
    *,
    actor: Actor,
    requests: list[RememberInput],
    render: Render | None = None,
    started: EmbeddedAhead | None = None,
) -> list[BatchItemResult]:
    """Remember several memories; each succeeds or fails on its own. Embeds in one batch.

    `render` is how the caller answers a result: a request under an idempotency key needs it (its
    record keeps the rendering, and its retry is answered the same). `started`: a small call's
    pass begun before anything was checked, used where it embeds the texts `ahead_of_checks`
    gives (its caller drops it)."""
    access.require_write_access(actor)
    # A batch is bulk work: the host's requests in flight go first, between its items and
    # before its passes of the model and its statements (within a bounded wait, once for the
    # items here).
    allowance = None
    if len(requests) >= SMALL_BATCH:
        foreground.step_back()
        allowance = foreground.Allowance()
    items = [BatchItemResult(error=refuse_nul(request)) for request in requests]
    keys = [
        request.idempotency_key
        for request, item in zip(requests, items, strict=True)
        if request.idempotency_key and item.error is None
    ]
    replays = idempotency.Replays.load(actor, keys)
    # A small call's model starts now, on the texts of the requests that are not replays
    # (`ahead_of_checks`), and runs while the checks below run here; a batch's starts after
    # them, once its texts are known good.
    ahead = None
    if allowance is None:
        texts = ahead_of_checks(requests, items, replays)
        ahead = started if started is not None and started.embeds(texts) else EmbeddedAhead(texts)
    try:
        prepared: dict[int, Prepared] = {}
        scopes: dict[str, Scope | DomainError] = {}
        seen_keys: set[str] = set()
        for index, request in enumerate(requests):
            if items[index].error is not None:
                continue
            if allowance is not None:
                foreground.give_way(allowance)
            key = request.idempotency_key
            try:
                answer = replays.answer(request)
                if answer is not None:
                    items[index].result = _replayed(answer)
                    continue
                if key and key in seen_keys:
                    raise ValidationFailed(
                        "idempotency_key",
                        _("The same idempotency key appears twice in this batch."),
                    )
                prepared[index] = prepare(actor, request, scope_for(actor, request, scopes))
                if key:
                    seen_keys.add(key)
            except DomainError as exc:
                items[index].error = exc
        if not prepared:
            return items
        if ahead is None:
            # A batch: every request here is checked and authorized. The model starts on their
            # texts in another thread, and this one derives them and looks up duplicates
            # meanwhile.
            ahead = EmbeddedAhead([item.text for item in prepared.values()])
        if allowance is not None:  # a batch: its texts derived here, between the host's requests
            for item in prepared.values():
                foreground.give_way(allowance)
                item.derive()
        stale = replays.stale_ids(seen_keys)
        try:
            _commit(actor, prepared, items, stale, render, ahead)
        except IntegrityError:
            _commit_each(actor, prepared, items, stale, render, ahead)
    finally:
        if ahead is not None:
            ahead.drop()
    return items


def ahead_of_checks(
    requests: list[RememberInput], items: list[BatchItemResult], replays: idempotency.Replays
) -> list[str]:
    """The texts a small call's model starts on before their scope, content guard and kind are
    checked: each request's text as it would be stored, except a replay's, one refused already
    and one whose text is empty or too long. Its caller may write (`require_write_access`); a
    request the checks then refuse has its vector dropped unused, never stored or answered, and
    is answered as before. The pass runs on the other core while this thread runs the checks
    (the scope's lookup, the content guard's patterns): a single remember waited for them, about
    half a millisecond, before its pass began."""
    texts = []
    for request, item in zip(requests, items, strict=True):
        if item.error is not None or replays.replayable(request.idempotency_key or ""):
            continue
        try:
            texts.append(clean_content(request.content))
        except DomainError:
            continue
    return texts
