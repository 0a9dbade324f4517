"""The structured content each MCP tool answers with; each model is the tool's output schema.

Errors are not described here: an error result (`isError`) carries `{"error": {"code", "message",
"details"}}` instead, and clients skip output-schema validation for it.
"""

from __future__ import annotations

from pydantic import BaseModel


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
    created_at: str
    notice: str | None = None


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


class MemoryStateOut(BaseModel):
    id: str
    scope: str
    kind: str
    content: str
    state: str
    forgotten_at: str | None
    forgotten_reason: str
    restored_at: str | None


class ScopeOut(BaseModel):
    id: str
    name: str
    slug: str
    kind: str
    owner: str
    role: str | None
    writable: bool


class ScopesOut(BaseModel):
    scopes: list[ScopeOut]
