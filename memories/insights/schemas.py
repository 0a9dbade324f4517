"""The insights answers: a scope's figures over a period, one session's receipt, and what a
scope holds."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel

from scopes.schemas import MemberOut


class DayOut(BaseModel):
    day: date
    recalls: int
    contexts: int
    briefings: int
    empty_reads: int
    memories_served: int
    tokens_served: int
    written: int


class WrittenOut(BaseModel):
    human: int
    agent: int
    capture: int


class ValueOut(BaseModel):
    recalls: int
    contexts: int
    briefings: int
    memories_served: int
    tokens_served: int
    sessions: int
    clients: int
    written: WrittenOut


class EmptyQueryOut(BaseModel):
    query: str  # exactly as sent
    operation: str
    at: datetime
    by: str  # the username
    not_english: bool
    lang: str


class MemoryLineOut(BaseModel):
    id: str
    kind: str
    content: str
    times: int = 0


class QualityOut(BaseModel):
    reads: int  # recalls and contexts
    empty_reads: int
    empty_rate: float  # empty_reads / reads, 0 without reads
    empty_queries: list[EmptyQueryOut]
    empty_queries_of_others_hidden: bool  # a member who is not an admin sees only their own
    most_recalled: list[MemoryLineOut]
    never_recalled: int  # valid memories older than 90 days not recalled in the last 90
    never_recalled_sample: list[MemoryLineOut]
    disputed: int
    disputed_sample: list[MemoryLineOut]


class QueueOut(BaseModel):
    pending: int
    failed: int


class CaptureYieldOut(BaseModel):
    chunks: int
    kept: int
    dropped: dict[str, int]


class HealthOut(BaseModel):
    review_open: int
    review_oldest_days: float | None
    translations: QueueOut
    extractions: QueueOut
    judgements: QueueOut
    capture: CaptureYieldOut


class SpendDayOut(BaseModel):
    day: date
    tokens: int
    calls: int


class PathCostOut(BaseModel):
    path: str
    budget_per_day: int  # 0: no budget
    budget_per: str  # "scope" or "user"
    tokens: int
    calls: int
    days: list[SpendDayOut]


class InsightsOut(BaseModel):
    scope: str
    scope_name: str
    personal: bool  # the owner's personal scope (the dashboard names it in the reader's language)
    days: int
    since: date
    until: date
    value: ValueOut
    daily: list[DayOut]
    quality: QualityOut
    health: HealthOut
    cost: list[PathCostOut]


class ReceiptOut(BaseModel):
    conversation_id: str
    calls: int
    memories_recalled: int
    memories_written: int
    tokens_delivered: int
    conflicts_raised: int
    line: str


class KindCountOut(BaseModel):
    kind: str
    count: int


class OverviewRuleOut(BaseModel):
    id: str
    text: str
    memory_id: str


class ScopeOverviewOut(BaseModel):
    """What a scope holds (`describe_scope`); `members` only for its admins, else null."""

    scope: str
    name: str
    kind: str  # personal or team
    role: str | None  # the caller's
    memories: int  # valid ones
    retired: int  # forgotten or superseded
    kinds: list[KindCountOut]  # valid memories by kind, the largest first
    newest: list[MemoryLineOut]
    most_recalled: list[MemoryLineOut]  # times: recalls in all
    rules: list[OverviewRuleOut]  # approved, in their order
    review_open: int
    members: list[MemberOut] | None
