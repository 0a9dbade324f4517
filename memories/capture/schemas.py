"""The answers of ingest: a chunk's reference at once, its whole state later."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from memories.models import Chunk


class ChunkRef(BaseModel):
    id: str
    status: str
    duplicate: bool


class IngestOut(BaseModel):
    """POST /api/v1/ingest and the MCP tool: the chunk (null for a probe of an unknown hash)."""

    chunk: ChunkRef | None

    @classmethod
    def of(cls, *, chunk: Chunk | None, duplicate: bool) -> IngestOut:
        if chunk is None:
            return cls(chunk=None)
        return cls(chunk=ChunkRef(id=chunk.public_id, status=chunk.status, duplicate=duplicate))

    @property
    def stored_now(self) -> bool:
        return self.chunk is not None and not self.chunk.duplicate


class ChunkOut(BaseModel):
    id: str
    scope: str
    source_kind: str
    client: str
    conversation_id: str
    source_path: str
    chunk_hash: str
    status: str
    content_chars: int
    redactions: list[str]
    attempts: int
    error: str
    next_at: datetime | None
    tokens_used: int
    memories: list[str]
    kept: int
    dropped: dict[str, int]
    created_at: datetime
    extracted_at: datetime | None

    @classmethod
    def of(cls, chunk: Chunk) -> ChunkOut:
        return cls(
            id=chunk.public_id,
            scope=chunk.scope.public_id,
            source_kind=chunk.source_kind,
            client=chunk.client,
            conversation_id=chunk.conversation_id,
            source_path=chunk.source_path,
            chunk_hash=chunk.chunk_hash,
            status=chunk.status,
            content_chars=chunk.content_chars,
            redactions=chunk.redactions,
            attempts=chunk.attempts,
            error=chunk.error,
            next_at=chunk.next_at,
            tokens_used=chunk.tokens_used,
            memories=chunk.memory_ids,
            kept=chunk.kept,
            dropped=chunk.dropped,
            created_at=chunk.created_at,
            extracted_at=chunk.extracted_at,
        )


class ImportedOut(BaseModel):
    title: str
    kind: str
    outcome: str  # created, deduplicated, already_imported, or the error code of a refusal
    memory: str | None


class ImportOut(BaseModel):
    results: list[ImportedOut]
