"""Judging a queued pair, off the request path: a job of the engine (`memories.jobs`: claim and
lease, attempts, backoff, the sweeper), declared here.

1. before any call: a pair whose memories are no longer both valid needs none (cleared); without
   a key the pair waits (`waiting_for_key`) without spending an attempt;
2. the call: one Messages API call outside any transaction;
3. apply, in one transaction while the claim is still ours: record the verdict, then the rules
   either resolve the pair (add-only, audited), open it for review, or clear it.
"""

from __future__ import annotations

from django.utils import timezone

from memories.hygiene import rules
from memories.hygiene.judge import Side, Verdict, judge_pair
from memories.hygiene.review import resolve_automatically
from memories.jobs import Job
from memories.models import Conflict, ConflictStatus


def _side(memory) -> Side:
    return Side(
        kind=memory.kind_id, content=memory.content, created=f"{memory.created_at:%Y-%m-%d}"
    )


def _before(conflict: Conflict) -> str | None:
    if not (conflict.memory_a.valid and conflict.memory_b.valid):
        JUDGING.finish(conflict, status=ConflictStatus.CLEARED, judged_at=timezone.now())
        return "cleared"
    return None


def _judge(conflict: Conflict) -> Verdict:
    return judge_pair(a=_side(conflict.memory_a), b=_side(conflict.memory_b))


def _apply_verdict(conflict: Conflict, verdict: Verdict) -> str:
    a, b = conflict.memory_a, conflict.memory_b
    decision = None
    if a.valid and b.valid:
        decision = rules.automatic(
            relation=verdict.relation,
            confidence=verdict.confidence,
            a=rules.standing(a),
            b=rules.standing(b),
        )
    if verdict.relation in rules.NOTHING_TO_DO or not (a.valid and b.valid):
        status = ConflictStatus.CLEARED
    else:
        status = ConflictStatus.OPEN
    JUDGING.finish(
        conflict,
        verdict=verdict.relation,
        confidence=verdict.confidence,
        rationale=verdict.rationale,
        judged_at=timezone.now(),
        status=status,
        error="",
        next_at=None,
    )
    if decision is None:
        return str(status)
    resolve_automatically(conflict=conflict, resolution=decision.resolution, retire=decision.retire)
    return "resolved"


JUDGING = Job(
    name="judging",
    model=Conflict,
    task="memories.hygiene.tasks.judge",
    task_name="judge",
    settings="HYGIENE",
    before=_before,
    call=_judge,
    apply=_apply_verdict,
    waiting_status=ConflictStatus.WAITING_FOR_KEY,
    related=("memory_a", "memory_b", "scope"),
    batch=200,
)


def conflict_judge(*, conflict_id: int, claim: str) -> str:
    """Judge one claimed pair; returns what happened (for logs and tests)."""
    return JUDGING.run(row_id=conflict_id, claim=claim)


def due_conflicts(*, limit: int | None = None) -> list[tuple[int, str]]:
    """Claim pairs that are due: backoff over, no live lease, and waiting ones once a key is
    set; [(id, claim)]."""
    return JUDGING.due(limit=limit)


def conflict_retry(*, conflict: Conflict) -> str | None:
    """A failed pair back in the queue with fresh attempts (the admin's action)."""
    return JUDGING.retry(row=conflict)
