"""remember(): the one write path every surface uses (REST, MCP, dashboard, ingest).

In order: the content guard refuses secrets; validation (text, size, kind, writable scope);
language detection; an identical valid memory in the scope absorbs the write (a provenance row,
no new memory); otherwise embed, look for near duplicates (cosine >= 0.92), insert with provenance,
and enqueue canonicalization on commit when the text is not English. A partial unique index on
(scope, content hash) among valid memories makes two racing identical writes one memory.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.activity import logs_remember
from memories.canonical.language import detect_language
from memories.canonical.service import new_claim
from memories.canonical.tasks import enqueue_canonicalization
from memories.embeddings import Embedded, embed_contents
from memories.guard import refuse_secrets
from memories.kinds import kind_for_slug
from memories.models import (
    AuthorKind,
    IdempotencyRecord,
    Memory,
    MemoryWindow,
    Provenance,
    SourceKind,
    TranslationStatus,
)
from memories.services.common import content_hash, save_windows
from scopes import access
from scopes.models import Scope, ScopeKind
from zeromemory.core.actor import Actor
from zeromemory.core.errors import Conflict, DomainError, ValidationFailed


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


@dataclass(frozen=True)
class SimilarMemory:
    id: str
    similarity: float
    age_days: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "similarity": round(self.similarity, 4), "age_days": self.age_days}


@dataclass
class RememberResult:
    memory: Memory
    deduplicated: bool
    similar_existing: list[SimilarMemory] = field(default_factory=list)
    replayed: bool = False

    @property
    def created(self) -> bool:
        return not self.deduplicated

    def as_dict(self) -> dict[str, Any]:
        memory = self.memory
        return {
            "id": memory.public_id,
            "scope": memory.scope.public_id,
            "kind": memory.kind_id,
            "content": memory.content,
            "content_lang": memory.content_lang,
            "translation_status": memory.translation_status,
            "deduplicated": self.deduplicated,
            "similar_existing": [similar.as_dict() for similar in self.similar_existing],
            "created_at": memory.created_at.isoformat(),
        }


@dataclass
class BatchItemResult:
    result: RememberResult | None = None
    error: DomainError | None = None


@dataclass
class _Prepared:
    request: RememberInput
    scope: Scope
    content: str
    verbatim: str
    content_hash: str
    lang: str
    status: str
    author_kind: str
    embedded: Embedded | None = None


def _personal_scope(actor: Actor) -> Scope:
    scope = access.writable_scopes(actor).filter(kind=ScopeKind.PERSONAL).first()
    if scope is None:
        access.require_write_access(actor)
        raise ValidationFailed(
            "scope", _("Name a scope: this token cannot write your personal one.")
        )
    return scope


_TEXT_FIELDS = (
    "content",
    "verbatim",
    "conversation_id",
    "source_path",
    "chunk_hash",
    "scope",
    "idempotency_key",
)


def _refuse_nul(request: RememberInput) -> DomainError | None:
    """PostgreSQL text cannot hold NUL: refuse it before any query, naming the field."""
    for name in _TEXT_FIELDS:
        value = getattr(request, name)
        if isinstance(value, str) and "\x00" in value:
            return ValidationFailed(name, _("NUL characters are not allowed."))
    return None


def _prepare(actor: Actor, request: RememberInput, scope: Scope) -> _Prepared:
    refuse_secrets(
        {
            "content": request.content,
            "verbatim": request.verbatim,
            "conversation_id": request.conversation_id,
            "source_path": request.source_path,
        }
    )
    content = request.content.strip() if isinstance(request.content, str) else ""
    if not content:
        raise ValidationFailed("content", _("Content is empty."))
    if len(content) > settings.MAX_MEMORY_CHARS:
        raise ValidationFailed(
            "content",
            _("Content is longer than %(n)d characters.") % {"n": settings.MAX_MEMORY_CHARS},
        )
    kind_for_slug(request.kind)
    if request.author_kind is not None and request.author_kind not in AuthorKind.values:
        raise ValidationFailed("author_kind", _("Unknown author kind."))
    decision = detect_language(content)
    default_author = AuthorKind.HUMAN if actor.token is None else AuthorKind.AGENT
    return _Prepared(
        request=request,
        scope=scope,
        content=content,
        verbatim=(request.verbatim or "").strip(),
        content_hash=content_hash(content),
        lang=decision.lang,
        status=TranslationStatus.PENDING
        if decision.needs_translation
        else TranslationStatus.SKIPPED,
        author_kind=request.author_kind or default_author,
    )


def _identical(prepared: _Prepared) -> Memory | None:
    return (
        Memory.objects.select_related("scope")
        .filter(scope=prepared.scope, content_hash=prepared.content_hash, valid=True)
        .first()
    )


def _absorb(actor: Actor, prepared: _Prepared, memory: Memory) -> RememberResult:
    _provenance_row(actor, prepared, memory, absorbed=True).save()
    return RememberResult(memory=memory, deduplicated=True)


def _insert(actor: Actor, prepared: _Prepared) -> RememberResult:
    """Insert the memory, or absorb into an identical or (when asked) similar valid memory."""
    existing = _identical(prepared)
    if existing is not None:
        return _absorb(actor, prepared, existing)
    if prepared.embedded is None:  # the identical memory seen earlier is gone by now
        prepared.embedded = embed_contents([prepared.content])[0]
    embedded = prepared.embedded
    similar = _near_many({0: prepared})[0]
    if similar and prepared.request.absorb_similar:
        target = Memory.objects.select_related("scope").get(public_id=similar[0].id)
        return _absorb(actor, prepared, target)
    memory = _new_memory(actor, prepared)
    claim = new_claim(memory) if prepared.status == TranslationStatus.PENDING else ""
    try:
        with transaction.atomic():
            memory.save(force_insert=True)
    except IntegrityError:
        # A concurrent identical write committed first: absorb into it.
        existing = _identical(prepared)
        if existing is None:
            raise
        return _absorb(actor, prepared, existing)
    save_windows(memory=memory, embedded=embedded, replace=False)
    _provenance_row(actor, prepared, memory, absorbed=False).save()
    if claim:
        transaction.on_commit(lambda: enqueue_canonicalization(memory_id=memory.id, claim=claim))
    return RememberResult(memory=memory, deduplicated=False, similar_existing=similar)


def fingerprint(request: RememberInput) -> str:
    """What a retry must repeat to be a retry: every field but the key itself."""
    fields = asdict(request)
    fields.pop("idempotency_key")
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def _key_conflict() -> Conflict:
    message = _("This idempotency key was already used for another request.")
    return Conflict(message, details={"idempotency_key": [message]})


@dataclass
class _Replays:
    """The caller's earlier answers under the keys of a batch, and which of them it may replay."""

    records: dict[str, IdempotencyRecord]
    readable: set[str]

    @classmethod
    def load(cls, actor: Actor, keys: list[str]) -> _Replays:
        if not keys:
            return cls({}, set())
        records = {
            r.key: r for r in IdempotencyRecord.objects.filter(user=actor.user, key__in=keys)
        }
        ids = [record.answer.get("id") for record in records.values()]
        readable = set(
            Memory.objects.filter(
                scope__in=access.readable_scopes(actor), public_id__in=ids
            ).values_list("public_id", flat=True)
        )
        return cls(records, readable)

    def replay(self, request: RememberInput) -> RememberResult | None:
        """The earlier answer, None when the key is new (or names what the caller cannot read)."""
        record = self.records.get(request.idempotency_key or "")
        if record is None or record.answer.get("id") not in self.readable:
            return None
        if record.fingerprint and record.fingerprint != fingerprint(request):
            raise _key_conflict()
        return _replayed(record.answer)

    def stale_ids(self, keys: set[str]) -> list[int]:
        """Records under these keys whose memory the caller can no longer read."""
        return [r.id for key, r in self.records.items() if key in keys]


def _record(actor: Actor, prepared: _Prepared, result: RememberResult) -> IdempotencyRecord:
    return IdempotencyRecord(
        user=actor.user,
        key=prepared.request.idempotency_key,
        fingerprint=fingerprint(prepared.request),
        status=201,
        answer=result.as_dict(),
    )


def _commit(actor: Actor, prepared: _Prepared, stale: list[int]) -> RememberResult:
    key = prepared.request.idempotency_key
    try:
        with transaction.atomic():
            result = _insert(actor, prepared)
            if key:
                IdempotencyRecord.objects.filter(id__in=stale, key=key).delete()
                _record(actor, prepared, result).save(force_insert=True)
    except IntegrityError:
        if key:
            replayed = _Replays.load(actor, [key]).replay(prepared.request)
            if replayed is None:
                raise _key_conflict() from None
            return replayed
        raise
    return result


def _replayed(answer: dict[str, Any]) -> RememberResult:
    memory = Memory.objects.select_related("scope").get(public_id=answer["id"])
    similar = [SimilarMemory(**item) for item in answer.get("similar_existing", [])]
    return RememberResult(
        memory=memory, deduplicated=answer["deduplicated"], similar_existing=similar, replayed=True
    )


def memory_remember(*, actor: Actor, request: RememberInput) -> RememberResult:
    """Remember one memory; raises DomainError for bad input or access."""
    [item] = memory_remember_many(actor=actor, requests=[request])
    if item.error is not None:
        raise item.error
    return item.result


def _scope_for(actor: Actor, request: RememberInput, cache: dict) -> Scope:
    """The writable scope of a request, looked up once per batch."""
    key = request.scope or ""
    if key not in cache:
        try:
            cache[key] = (
                access.writable_scope(actor, request.scope)
                if request.scope
                else _personal_scope(actor)
            )
        except DomainError as exc:
            cache[key] = exc.naming("scope") if request.scope else exc
    found = cache[key]
    if isinstance(found, DomainError):
        raise found
    return found


def _identical_many(prepared: list[_Prepared]) -> dict[tuple[int, str], Memory]:
    """Valid memories with the same normalized text in the same scope, in one query."""
    wanted = {(p.scope.id, p.content_hash) for p in prepared}
    found = Memory.objects.select_related("scope").filter(
        valid=True,
        scope_id__in={scope_id for scope_id, _ in wanted},
        content_hash__in={digest for _, digest in wanted},
    )
    return {
        (m.scope_id, m.content_hash): m for m in found if (m.scope_id, m.content_hash) in wanted
    }


_NEAR_SQL = """
SELECT q.i, m.public_id, m.distance, m.created_at
FROM unnest(%s::int[], %s::bigint[], %s::text[]::vector[]) AS q(i, scope_id, v)
CROSS JOIN LATERAL (
    SELECT public_id, created_at, embedding <=> q.v AS distance
    FROM memories_memory
    WHERE scope_id = q.scope_id AND valid AND embedding IS NOT NULL
    ORDER BY embedding <=> q.v
    LIMIT 3
) AS m
"""


def _near_many(prepared: dict[int, _Prepared]) -> dict[int, list[SimilarMemory]]:
    """Near duplicates for several new memories in one round trip."""
    if not prepared:
        return {}
    indexes = list(prepared)
    scope_ids = [prepared[i].scope.id for i in indexes]
    vectors = ["[" + ",".join(map(repr, prepared[i].embedded.vector)) + "]" for i in indexes]
    threshold = settings.NEAR_DUPLICATE_SIMILARITY
    now = timezone.now()
    similar: dict[int, list[SimilarMemory]] = {i: [] for i in indexes}
    with connection.cursor() as cursor:
        cursor.execute(_NEAR_SQL, [indexes, scope_ids, vectors])
        for index, public_id, distance, created in cursor.fetchall():
            if 1.0 - distance >= threshold:
                similar[index].append(
                    SimilarMemory(
                        id=public_id,
                        similarity=1.0 - distance,
                        age_days=round((now - created).total_seconds() / 86400, 2),
                    )
                )
    return similar


def _new_memory(actor: Actor, prepared: _Prepared) -> Memory:
    return Memory(
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


def _provenance_row(actor: Actor, prepared: _Prepared, memory: Memory, *, absorbed: bool):
    request = prepared.request
    return Provenance(
        memory=memory,
        source_kind=request.source_kind,
        absorbed=absorbed,
        client_name=actor.client_name,
        conversation_id=request.conversation_id,
        source_path=request.source_path,
        chunk_hash=request.chunk_hash,
        verbatim=prepared.verbatim,
        written_text=prepared.content if absorbed and prepared.content != memory.content else "",
        created_by=actor.user,
        created_by_token=actor.token,
    )


def _commit_bulk(
    actor: Actor, prepared: dict[int, _Prepared], items: list[BatchItemResult], stale: list[int]
) -> None:
    """The common case in a few statements; raises IntegrityError when a concurrent write won."""
    existing = _identical_many(list(prepared.values()))
    first_of: dict[tuple[int, str], int] = {}
    fresh: dict[int, _Prepared] = {}
    for index, item in prepared.items():
        key = (item.scope.id, item.content_hash)
        if key not in existing and key not in first_of:
            first_of[key] = index
            fresh[index] = item
    for index, embedded in zip(
        fresh, embed_contents([item.content for item in fresh.values()]), strict=True
    ):
        fresh[index].embedded = embedded
    similar = _near_many(fresh)
    targets: dict[int, Memory] = {}
    for index in list(fresh):
        if similar[index] and fresh[index].request.absorb_similar:
            targets[index] = Memory.objects.select_related("scope").get(
                public_id=similar[index][0].id
            )
            del first_of[(fresh[index].scope.id, fresh[index].content_hash)]
            del fresh[index]
    with transaction.atomic():
        created = dict(
            zip(
                fresh,
                Memory.objects.bulk_create(_new_memory(actor, item) for item in fresh.values()),
                strict=True,
            )
        )
        claims = {}
        for memory in created.values():
            if memory.translation_status == TranslationStatus.PENDING:
                claims[memory.id] = new_claim(memory)
        if claims:
            Memory.objects.bulk_update(
                [m for m in created.values() if m.id in claims],
                ["translation_claim", "translation_lease_until"],
            )
        MemoryWindow.objects.bulk_create(
            MemoryWindow(
                memory=created[index],
                position=window.position,
                start_char=window.start_char,
                end_char=window.end_char,
                embedding=vector,
            )
            for index, item in fresh.items()
            for window, vector in item.embedded.windows
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
        if stale:
            IdempotencyRecord.objects.filter(id__in=stale).delete()
        IdempotencyRecord.objects.bulk_create(
            _record(actor, item, items[index].result)
            for index, item in prepared.items()
            if item.request.idempotency_key
        )
        for memory_id, claim in claims.items():
            transaction.on_commit(
                partial(enqueue_canonicalization, memory_id=memory_id, claim=claim)
            )


@logs_remember
def memory_remember_many(*, actor: Actor, requests: list[RememberInput]) -> list[BatchItemResult]:
    """Remember several memories; each succeeds or fails on its own. Embeds in one batch."""
    access.require_write_access(actor)
    items = [BatchItemResult(error=_refuse_nul(request)) for request in requests]
    replays = _Replays.load(
        actor,
        [
            r.idempotency_key
            for r, i in zip(requests, items, strict=True)
            if r.idempotency_key and not i.error
        ],
    )
    prepared: dict[int, _Prepared] = {}
    scopes: dict[str, Scope | DomainError] = {}
    seen_keys: set[str] = set()
    for index, request in enumerate(requests):
        if items[index].error is not None:
            continue
        key = request.idempotency_key
        try:
            items[index].result = replays.replay(request)
        except DomainError as exc:
            items[index].error = exc
        if items[index].result is not None or items[index].error is not None:
            continue
        if key and key in seen_keys:
            items[index].error = ValidationFailed(
                "idempotency_key", _("The same idempotency key appears twice in this batch.")
            )
            continue
        try:
            request_scope = _scope_for(actor, request, scopes)
            prepared[index] = _prepare(actor, request, request_scope)
            if key:
                seen_keys.add(key)
        except DomainError as exc:
            items[index].error = exc
    if not prepared:
        return items
    stale = replays.stale_ids(seen_keys)
    try:
        _commit_bulk(actor, prepared, items, stale)
    except IntegrityError:
        # A concurrent write took the same text or idempotency key first: item by item, each
        # absorbing into (or replaying) what the other writer committed.
        for index, item in prepared.items():
            try:
                items[index].result = _commit(actor, item, stale)
            except DomainError as exc:
                items[index].error = exc
    return items
