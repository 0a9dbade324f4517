"""One pydantic model per answer of memories: REST renders it, MCP returns it, and both the
OpenAPI document (drf-spectacular's pydantic support) and the MCP tools' output schemas come from
these definitions. Services, selectors and recall build them; surfaces only render.

Errors are not described here: every surface answers `{"error": {"code", "message",
"details"}}` (`zeromemory.core.errors.ErrorOut`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from memories.models import ActivityLog, Memory
from zeromemory.core.errors import ErrorBody


class SimilarOut(BaseModel):
    id: str
    similarity: float
    age_days: float


class RememberOut(BaseModel):
    id: str
    scope: str
    kind: str
    content: str
    content_lang: str
    translation_status: str
    deduplicated: bool
    similar_existing: list[SimilarOut]
    created_at: datetime


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


def _public_id(related: Any) -> str | None:
    return related.public_id if related is not None else None


class MemoryOut(BaseModel):
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

    @classmethod
    def of(cls, memory: Memory, **extra: Any) -> MemoryOut:
        return cls(
            id=memory.public_id,
            scope=memory.scope.public_id,
            kind=memory.kind_id,
            content=memory.content,
            content_original=memory.content_original,
            content_lang=memory.content_lang,
            has_original=memory.has_original,
            translation_status=memory.translation_status,
            translation_attempts=memory.translation_attempts,
            translation_error=memory.translation_error,
            author_kind=memory.author_kind,
            agent_name=memory.agent_name,
            state=memory.state,
            forgotten_at=memory.forgotten_at,
            forgotten_reason=memory.forgotten_reason,
            superseded_by=_public_id(memory.superseded_by) if memory.superseded_by_id else None,
            restored_at=memory.restored_at,
            created_at=memory.created_at,
            updated_at=memory.updated_at,
            **extra,
        )


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


class AbsorbedOut(BaseModel):
    """A memory merged into this one (e.g. the same fact first written in another language)."""

    id: str
    content: str
    content_original: str
    content_lang: str


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


class MemoryDetailOut(MemoryOut):
    provenance: list[ProvenanceOut]
    versions: list[VersionOut]
    absorbed_memories: list[AbsorbedOut]

    @classmethod
    def of(cls, memory: Memory) -> MemoryDetailOut:
        """From a memory loaded by `selectors.memory_detail` (its relations prefetched)."""
        return super().of(
            memory,
            provenance=[
                ProvenanceOut(
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
                for row in memory.provenance.all()
            ],
            versions=[
                VersionOut(
                    number=version.number,
                    kind=version.kind_id,
                    content=version.content,
                    content_original=version.content_original,
                    content_lang=version.content_lang,
                    edited_by=_username(version.edited_by),
                    created_at=version.created_at,
                )
                for version in memory.versions.all()
            ],
            absorbed_memories=[
                AbsorbedOut(
                    id=other.public_id,
                    content=other.content,
                    content_original=other.content_original,
                    content_lang=other.content_lang,
                )
                for other in memory.supersedes.all()
            ],
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


class RecallOut(BaseModel):
    query: str
    results: list[HitOut]


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


class ActivityOut(BaseModel):
    id: str
    operation: str
    surface: str
    token: str | None
    client_name: str
    scopes: list[str]
    query: str
    options: dict[str, Any]
    results: list[dict[str, Any]]
    latency_ms: float
    outcome: str
    error_code: str
    created_at: datetime

    @classmethod
    def of(cls, row: ActivityLog) -> ActivityOut:
        return cls(
            id=row.public_id,
            operation=row.operation,
            surface=row.surface,
            token=_public_id(row.token),
            client_name=row.client_name,
            scopes=row.scopes,
            query=row.query,
            options=row.options,
            results=row.results,
            latency_ms=row.latency_ms,
            outcome=row.outcome,
            error_code=row.error_code,
            created_at=row.created_at,
        )


class ActivityPageOut(BaseModel):
    results: list[ActivityOut]
    next_cursor: str | None
