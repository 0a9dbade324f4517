"""The answers of the review queue: a conflict with both memories side by side, a page of them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from memories.hygiene.auto_resolution import RANKS
from memories.models import Conflict, Memory
from memories.schemas import MemoryFields

if TYPE_CHECKING:
    from memories.hygiene.service import ScopeScanned


class ConflictMemoryOut(MemoryFields):
    id: str
    kind: str
    content: str
    content_original: str
    content_lang: str
    author_kind: str
    rank: int  # authority: a person 2, an agent 1, capture 0
    state: str
    created_at: datetime

    @classmethod
    def of(cls, memory: Memory) -> ConflictMemoryOut:
        return super().of(memory, rank=RANKS.get(memory.author_kind, 0))


class ConflictOut(BaseModel):
    id: str
    scope: str
    status: str
    verdict: str  # the judge's relation, "challenge" for a disputed memory, "" before judging
    confidence: float | None
    rationale: str  # the judge's, or the challenger's reason
    similarity: float | None
    memory_a: ConflictMemoryOut
    memory_b: ConflictMemoryOut | None  # None for a challenge
    resolution: str
    resolved_automatically: bool
    resolved_by: str | None
    resolved_at: datetime | None
    challenged_by: str | None
    created_at: datetime
    judged_at: datetime | None

    @classmethod
    def of(cls, conflict: Conflict) -> ConflictOut:
        def name(user) -> str | None:
            return user.get_username() if user is not None else None

        return cls(
            id=conflict.public_id,
            scope=conflict.scope.public_id,
            status=conflict.status,
            verdict=conflict.verdict,
            confidence=conflict.confidence,
            rationale=conflict.rationale,
            similarity=conflict.similarity,
            memory_a=ConflictMemoryOut.of(conflict.memory_a),
            memory_b=ConflictMemoryOut.of(conflict.memory_b) if conflict.memory_b_id else None,
            resolution=conflict.resolution,
            resolved_automatically=conflict.resolved_automatically,
            resolved_by=name(conflict.resolved_by),
            resolved_at=conflict.resolved_at,
            challenged_by=name(conflict.challenged_by),
            created_at=conflict.created_at,
            judged_at=conflict.judged_at,
        )


class ConflictPageOut(BaseModel):
    results: list[ConflictOut]
    next_cursor: str | None


class ChallengeOut(BaseModel):
    """The answer to a challenge: the queue item it went to, without what others wrote there
    (only the scope's admins read the item itself)."""

    id: str
    scope: str
    memory: str
    status: str
    new: bool  # False: the memory's open challenge took the reason
    reason: str  # the caller's reason, as recorded

    @classmethod
    def of(cls, conflict: Conflict, *, new: bool, reason: str) -> ChallengeOut:
        return cls(
            id=conflict.public_id,
            scope=conflict.scope.public_id,
            memory=conflict.memory_a.public_id,
            status=conflict.status,
            new=new,
            reason=reason.strip(),
        )


class ConflictsResolvedOut(BaseModel):
    """The answer to a bulk resolution: each item as it is after it (a dry run: as it would be;
    nothing was written)."""

    dry_run: bool
    results: list[ConflictOut]


class ScopeScanOut(BaseModel):
    """What one scope's scan now found and queued for the judge."""

    scope: str
    subjects: int  # memories changed since the last finished scan, compared now
    more: bool  # subjects beyond this scan's share: ask again with next_cursor
    next_cursor: str | None  # where the next share starts, when `more`; opaque
    pairs_found: int
    pairs_new: int  # queued for the judge
    awaiting_judgement: int  # the scope's pairs waiting for the judge, new or earlier
    judge_tokens_today: int
    judge_budget: int  # tokens a day for the scope; 0: no budget
    over_budget: bool  # judging waits for the next UTC day

    @classmethod
    def of(cls, scope_id: str, scanned: ScopeScanned) -> ScopeScanOut:
        scan = scanned.scan
        return cls(
            scope=scope_id,
            subjects=scan.subjects,
            more=scan.more,
            next_cursor=scan.last_subject,
            pairs_found=scan.pairs_found,
            pairs_new=scan.pairs_new,
            awaiting_judgement=scanned.awaiting_judgement,
            judge_tokens_today=scanned.judge_tokens_today,
            judge_budget=scanned.judge_budget,
            over_budget=scanned.over_budget,
        )
