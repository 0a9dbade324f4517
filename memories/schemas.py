"""One pydantic model per answer of memories: REST renders it, MCP returns it, and both the
OpenAPI document (drf-spectacular's pydantic support) and the MCP tools' output schemas come from
these definitions. A memory becomes any of them through one mapping (`MemoryFields`); services
and selectors return domain objects, and the surfaces render them with these models.

Errors are not described here: every surface answers `{"error": {"code", "message",
"details"}}` (`zeromemory.core.errors.ErrorOut`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from memories.models import Memory
from zeromemory.core.errors import ErrorBody


def _public_id(related: Any) -> str | None:
    return related.public_id if related is not None else None


# The one mapping from a memory to the fields of its answers; each answer takes those it declares.
MEMORY_FIELDS: dict[str, Callable[[Memory], Any]] = {
    "id": lambda m: m.public_id,
    "scope": lambda m: m.scope.public_id,
    "kind": lambda m: m.kind_id,
    "content": lambda m: m.content,
    "content_original": lambda m: m.content_original,
    "content_lang": lambda m: m.content_lang,
    "has_original": lambda m: m.has_original,
    "translation_status": lambda m: m.translation_status,
    "translation_attempts": lambda m: m.translation_attempts,
    "translation_error": lambda m: m.translation_error,
    "author_kind": lambda m: m.author_kind,
    "agent_name": lambda m: m.agent_name,
    "state": lambda m: m.state,
    "forgotten_at": lambda m: m.forgotten_at,
    "forgotten_reason": lambda m: m.forgotten_reason,
    "superseded_by": lambda m: _public_id(m.superseded_by) if m.superseded_by_id else None,
    "restored_at": lambda m: m.restored_at,
    "created_at": lambda m: m.created_at,
    "updated_at": lambda m: m.updated_at,
}


class MemoryFields(BaseModel):
    """The base of every answer that shows a memory."""

    @classmethod
    def of(cls, memory: Memory, **extra: Any):
        """The answer for `memory`: its declared fields through MEMORY_FIELDS, plus `extra`."""
        fields = {
            name: MEMORY_FIELDS[name](memory)
            for name in cls.model_fields
            if name in MEMORY_FIELDS and name not in extra
        }
        return cls(**fields, **extra)


class SimilarOut(BaseModel):
    id: str
    similarity: float
    age_days: float


class Remembered(Protocol):
    """What remember() returns for one write (`services.remember.RememberResult`)."""

    memory: Memory
    deduplicated: bool
    similar_existing: Sequence[Any]
    rendered: dict[str, Any] | None


class RememberOut(MemoryFields):
    id: str
    scope: str
    kind: str
    content: str
    content_lang: str
    translation_status: str
    deduplicated: bool
    similar_existing: list[SimilarOut]
    created_at: datetime

    @classmethod
    def answer(cls, result: Remembered) -> RememberOut:
        """The answer to a write; a replay answers what the first request was answered."""
        if result.rendered is not None:
            return cls.model_validate(result.rendered)
        similar = [
            SimilarOut(id=s.id, similarity=round(s.similarity, 4), age_days=s.age_days)
            for s in result.similar_existing
        ]
        return cls.of(result.memory, deduplicated=result.deduplicated, similar_existing=similar)

    @classmethod
    def rendered(cls, result: Remembered) -> dict[str, Any]:
        """The answer as the idempotency record keeps it (and a replay gives it back)."""
        return cls.answer(result).model_dump(mode="json")


class RememberToolOut(RememberOut):
    """What the MCP tool answers: the same, with a note to the agent when it wrote in another
    language."""

    notice: str | None = None


class BatchItemOut(BaseModel):
    index: int
    status: int  # 201 created, 200 deduplicated, or the error's status
    memory: RememberOut | None = None
    error: ErrorBody | None = None


class BatchOut(BaseModel):
    results: list[BatchItemOut]


class MemoryOut(MemoryFields):
    id: str
    scope: str
    kind: str
    content: str
    content_original: str
    content_lang: str
    has_original: bool
    translation_status: str
    translation_attempts: int
    translation_error: str
    author_kind: str
    agent_name: str
    state: str
    forgotten_at: datetime | None
    forgotten_reason: str
    superseded_by: str | None
    restored_at: datetime | None
    created_at: datetime
    updated_at: datetime


class MemoryPageOut(BaseModel):
    results: list[MemoryOut]
    next_cursor: str | None


class ProvenanceOut(BaseModel):
    source_kind: str
    absorbed: bool
    client_name: str
    conversation_id: str
    source_path: str
    chunk_hash: str
    chunk: str | None  # the captured chunk an extraction took the memory from
    verbatim: str
    written_text: str
    created_by: str | None
    created_at: datetime


class VersionOut(BaseModel):
    number: int
    kind: str
    content: str
    content_original: str
    content_lang: str
    edited_by: str | None
    created_at: datetime


class AbsorbedOut(MemoryFields):
    """A memory merged into this one (e.g. the same fact first written in another language)."""

    id: str
    content: str
    content_original: str
    content_lang: str


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


class MemoryLinkOut(BaseModel):
    """A typed link between two memories of one scope, read "source <type> target"."""

    id: str
    type: str  # relates_to, depends_on, caused_by, example_of
    source: str
    target: str
    author_kind: str  # who wrote it, from the credential: human, agent or capture
    agent_name: str
    created_by: str | None
    created_at: datetime
    removed_at: datetime | None  # a removed link keeps its row (history shows it)
    removed_by: str | None

    @classmethod
    def of(cls, link: Any) -> MemoryLinkOut:
        return cls(
            id=link.public_id,
            type=link.link_type,
            source=link.source.public_id,
            target=link.target.public_id,
            author_kind=link.author_kind,
            agent_name=link.agent_name,
            created_by=_username(link.created_by),
            created_at=link.created_at,
            removed_at=link.removed_at,
            removed_by=_username(link.removed_by),
        )


class MemoryLinksOut(BaseModel):
    """How a memory hangs together with others: its live typed links both ways, and beside them
    what hygiene records (supersession, contradictions judged by the review queue)."""

    outgoing: list[MemoryLinkOut]  # links this memory makes
    incoming: list[MemoryLinkOut]  # links other memories make to it
    supersedes: list[str]  # memories this one replaced
    superseded_by: str | None
    contradicts: list[str]  # memories the judge found contradicting it (open or resolved)

    @classmethod
    def of(cls, memory: Memory) -> MemoryLinksOut:
        """From a memory loaded by `selectors.memory_detail` (its links attached)."""
        return cls(
            outgoing=[MemoryLinkOut.of(link) for link in memory.links.outgoing],
            incoming=[MemoryLinkOut.of(link) for link in memory.links.incoming],
            supersedes=sorted(other.public_id for other in memory.supersedes.all()),
            superseded_by=MEMORY_FIELDS["superseded_by"](memory),
            contradicts=memory.contradicts,
        )


class MemoryDetailOut(MemoryOut):
    provenance: list[ProvenanceOut]
    versions: list[VersionOut]
    absorbed_memories: list[AbsorbedOut]
    links: MemoryLinksOut

    @classmethod
    def of(cls, memory: Memory) -> MemoryDetailOut:
        """From a memory loaded by `selectors.memory_detail` (its relations prefetched)."""
        return super().of(
            memory,
            provenance=[provenance_out(row) for row in memory.provenance.all()],
            versions=[version_out(version) for version in memory.versions.all()],
            absorbed_memories=[AbsorbedOut.of(other) for other in memory.supersedes.all()],
            links=MemoryLinksOut.of(memory),
        )


def provenance_out(row: Any) -> ProvenanceOut:
    return ProvenanceOut(
        source_kind=row.source_kind,
        absorbed=row.absorbed,
        client_name=row.client_name,
        conversation_id=row.conversation_id,
        source_path=row.source_path,
        chunk_hash=row.chunk_hash,
        chunk=_public_id(row.chunk) if row.chunk_id else None,
        verbatim=row.verbatim,
        written_text=row.written_text,
        created_by=_username(row.created_by),
        created_at=row.created_at,
    )


def version_out(version: Any) -> VersionOut:
    return VersionOut(
        number=version.number,
        kind=version.kind_id,
        content=version.content,
        content_original=version.content_original,
        content_lang=version.content_lang,
        edited_by=_username(version.edited_by),
        created_at=version.created_at,
    )


class HitOut(BaseModel):
    id: str
    content: str
    kind: str
    scope: str
    score: float
    similarity: float | None
    fts_matched: bool
    age_days: float
    has_original: bool
    disputed: bool = False  # an open review-queue item names this memory
    stale: bool = False  # not recalled, confirmed or written within its kind's half-life
    # Above the relevance floor (memories/recall/relevance.py); false only on a hit answered
    # because the caller asked for the nearest anyway (`nearest`).
    relevant: bool = True


class RecallOut(BaseModel):
    query: str
    results: list[HitOut]
    # Nothing the caller may read is relevant to the query: `results` is empty, or holds the
    # nearest memories when the caller asked for them anyway (`nearest`), each `relevant: false`.
    nothing_relevant: bool = False
    notice: str | None = None  # says so in words, for agents


class RowOut(BaseModel):
    id: str
    kind: str
    scope: str
    content: str
    truncated: bool
    tokens: int
    score: float | None
    age_days: float
    disputed: bool = False
    stale: bool = False
    # build_context: the entity the task names that the row is about; the rows of one entity are
    # shown together under its name (the markdown's `###` heading).
    group: str | None = None


class SectionOut(BaseModel):
    name: str
    title: str
    budget: int
    tokens: int
    rows: list[RowOut]


class ContextOut(BaseModel):
    topic: str | None
    max_tokens: int
    tokens: int
    sections: list[SectionOut]
    markdown: str


# -- move, share and benchmark (issue 38) ----------------------------------------------------


class RelocatedOut(BaseModel):
    """One memory moved or shared: where it was (its state now) and what it is in the target."""

    original: MemoryOut  # forgotten by a move, its reason naming where it went; a share's as is
    memory: MemoryOut  # in the target scope
    deduplicated: bool  # the target held the same text already: that memory absorbed it

    @classmethod
    def of(cls, relocated: Any) -> RelocatedOut:
        return cls(
            original=MemoryOut.of(relocated.original),
            memory=MemoryOut.of(relocated.memory),
            deduplicated=relocated.deduplicated,
        )


class MoveOut(BaseModel):
    to_scope: str
    results: list[RelocatedOut]


class BenchmarkCaseOut(BaseModel):
    question: str
    expected_ids: list[str]
    found_ids: list[str]  # what recall answered, best first
    recall: float  # share of the expected memories in the top k
    reciprocal_rank: float  # 1 / rank of the first expected memory found, 0 when none
    missed: list[str]  # expected memories recall did not answer in its top k


class BenchmarkOut(BaseModel):
    scope: str
    k: int
    cases: int
    recall_at_k: float
    mrr: float
    results: list[BenchmarkCaseOut]
    misses: list[BenchmarkCaseOut]  # the questions with at least one expected memory missed

    @classmethod
    def of(cls, benchmark: Any) -> BenchmarkOut:
        results = [
            BenchmarkCaseOut(**{**vars(case), "recall": round(case.recall, 4)})
            for case in benchmark.cases
        ]
        return cls(
            scope=benchmark.scope.public_id,
            k=benchmark.k,
            cases=len(results),
            recall_at_k=round(benchmark.recall_at_k, 4),
            mrr=round(benchmark.mrr, 4),
            results=results,
            misses=[case for case in results if case.missed],
        )


class ScopeHoldingsOut(BaseModel):
    """The MCP resource zm://scope/{id}: a readable scope and what it holds now."""

    id: str
    name: str
    kind: str
    role: str | None = Field(description="The caller's role: reader, writer or admin.")
    memories: int = Field(description="Valid memories in the scope.")
    kinds: dict[str, int] = Field(description="Valid memories by kind.")


# -- entities (memories.entities.selectors, memories.entities.services) -------------------------


class EntityRefOut(BaseModel):
    """An entity named inside another answer."""

    id: str
    name: str
    kind: str

    @classmethod
    def of(cls, entity: Any) -> EntityRefOut:
        return cls(id=entity.public_id, name=entity.name, kind=entity.kind)


class EntityOut(BaseModel):
    """An entity of a scope: what memories are about (a person, a service, a path…)."""

    id: str
    scope: str
    kind: str
    name: str
    aliases: list[str] = Field(description="Every name it answers to, its own first.")
    merged_into: str | None = Field(description="The entity it is merged into, while it stands.")
    memories: int = Field(description="Current memories you can read that mention it.")
    created_at: datetime

    @classmethod
    def of(cls, entity: Any, *, memories: int, aliases: list[str] | None = None) -> EntityOut:
        if aliases is None:
            aliases = [alias.alias for alias in entity.aliases.all()]
        return cls(
            id=entity.public_id,
            scope=entity.scope.public_id,
            kind=entity.kind,
            name=entity.name,
            aliases=aliases,
            merged_into=_public_id(entity.merged_into) if entity.merged_into_id else None,
            memories=memories,
            created_at=entity.created_at,
        )


class EntityPageOut(BaseModel):
    results: list[EntityOut]
    next_cursor: str | None


class EntityNeighbourOut(EntityRefOut):
    shared_memories: int = Field(description="Current memories mentioning both.")


class EntityTimelineOut(BaseModel):
    day: str  # YYYY-MM-DD (UTC)
    memories: int  # current memories mentioning it written that day


class EntityDetailOut(BaseModel):
    """One entity described: its current memories newest first (one page), the entities they
    also mention (only of scopes you can read), and the days they were written."""

    entity: EntityOut
    folded: list[EntityRefOut] = Field(description="Entities merged into this one.")
    memories: list[MemoryOut]
    next_cursor: str | None
    neighbours: list[EntityNeighbourOut]
    timeline: list[EntityTimelineOut]

    @classmethod
    def of(cls, description: Any, *, aliases: list[str]) -> EntityDetailOut:
        return cls(
            entity=EntityOut.of(
                description.entity, memories=description.memory_count, aliases=aliases
            ),
            folded=[EntityRefOut.of(entity) for entity in description.folded],
            memories=[MemoryOut.of(memory) for memory in description.memories],
            next_cursor=description.next_cursor,
            neighbours=[
                EntityNeighbourOut(
                    **EntityRefOut.of(n.entity).model_dump(), shared_memories=n.shared_memories
                )
                for n in description.neighbours
            ],
            timeline=[
                EntityTimelineOut(day=row.day.isoformat(), memories=row.memories)
                for row in description.timeline
            ],
        )


class EntitiesToolOut(BaseModel):
    """The MCP tool `entities`: a page of entities found (`results`), or one described
    (`entity`, with `results` empty)."""

    results: list[EntityOut]
    entity: EntityDetailOut | None
    next_cursor: str | None


class EntityAliasOut(BaseModel):
    entity: str
    alias: str
    created_at: datetime


class EntityReshapeOut(BaseModel):
    """A merge (`merged` folded into `survivor`) or a split (`created` made from `source` with
    the names in `aliases`); add-only: undoing one marks it undone."""

    kind: str  # merge or split
    scope: str
    merged: EntityRefOut | None = None
    survivor: EntityRefOut | None = None
    source: EntityRefOut | None = None
    created: EntityRefOut | None = None
    aliases: list[str] = Field(default_factory=list)
    mentions_moved: int = 0
    by: str | None
    at: datetime
    undone_by: str | None
    undone_at: datetime | None

    @classmethod
    def of_merge(cls, merge: Any) -> EntityReshapeOut:
        return cls(
            kind="merge",
            scope=merge.scope.public_id,
            merged=EntityRefOut.of(merge.merged),
            survivor=EntityRefOut.of(merge.survivor),
            by=_username(merge.by),
            at=merge.at,
            undone_by=_username(merge.undone_by),
            undone_at=merge.undone_at,
        )

    @classmethod
    def of_split(cls, split: Any, *, aliases: list[str]) -> EntityReshapeOut:
        return cls(
            kind="split",
            scope=split.scope.public_id,
            source=EntityRefOut.of(split.source),
            created=EntityRefOut.of(split.created),
            aliases=aliases,
            mentions_moved=len(split.mention_ids),
            by=_username(split.by),
            at=split.at,
            undone_by=_username(split.undone_by),
            undone_at=split.undone_at,
        )
