"""Judging a queued pair, off the request path, with the claim, lease, retries and sweeper that
canonicalization and extraction use.

1. claim: lock the pair (skip_locked) and exchange the task's claim for a fresh one with a
   lease, so two workers never judge one pair and a redelivered task does nothing;
2. without a key the pair waits (`waiting_for_key`) without spending an attempt; a pair whose
   memories are no longer both valid needs no call (cleared);
3. one Messages API call outside any transaction;
4. apply in one transaction, if the claim is still ours: record the verdict, then the rules
   either resolve the pair (add-only, audited), open it for review, or clear it.

A failure records the attempt and its error and backs off, or fails at once when another
attempt cannot help; the admin retries failed pairs.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories.canonical.service import backoff_seconds
from memories.hygiene import rules
from memories.hygiene.judge import Side, Verdict, judge_pair
from memories.hygiene.review import resolve_automatically
from memories.models import Conflict, ConflictStatus
from zeromemory.core.llm import LLMCallFailed

logger = logging.getLogger(__name__)

SWEEP_BATCH = 200


def new_claim(conflict: Conflict) -> str:
    conflict.claim = uuid.uuid4().hex
    conflict.lease_until = timezone.now() + timedelta(seconds=settings.HYGIENE_LEASE_SECONDS)
    return conflict.claim


def _claim(conflict_id: int, claim: str) -> Conflict | None:
    with transaction.atomic():
        conflict = (
            Conflict.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("memory_a", "memory_b")
            .filter(pk=conflict_id, status=ConflictStatus.PENDING)
            .first()
        )
        if conflict is None or not claim or conflict.claim != claim:
            return None
        new_claim(conflict)
        conflict.save(update_fields=["claim", "lease_until"])
        return conflict


def _locked_if_ours(conflict_id: int, claim: str) -> Conflict | None:
    conflict = (
        Conflict.objects.select_for_update(of=("self",))
        .select_related("memory_a", "memory_b", "scope")
        .get(pk=conflict_id)
    )
    if conflict.claim != claim or conflict.status != ConflictStatus.PENDING:
        return None
    return conflict


def _save(conflict: Conflict, **fields) -> None:
    for name, value in fields.items():
        setattr(conflict, name, value)
    conflict.claim, conflict.lease_until = "", None
    conflict.save(update_fields=[*fields, "claim", "lease_until"])


def _side(memory) -> Side:
    return Side(
        kind=memory.kind_id, content=memory.content, created=f"{memory.created_at:%Y-%m-%d}"
    )


def conflict_judge(*, conflict_id: int, claim: str) -> str:
    """Judge one claimed pair; returns what happened (for logs and tests)."""
    if not settings.ANTHROPIC_API_KEY:
        Conflict.objects.filter(pk=conflict_id, claim=claim).update(
            status=ConflictStatus.WAITING_FOR_KEY, claim="", lease_until=None
        )
        return "no-key"
    conflict = _claim(conflict_id, claim)
    if conflict is None:
        return "not-claimed"
    a, b = conflict.memory_a, conflict.memory_b
    if not (a.valid and b.valid):
        _save(conflict, status=ConflictStatus.CLEARED, judged_at=timezone.now())
        return "cleared"
    try:
        verdict = judge_pair(a=_side(a), b=_side(b))
    except LLMCallFailed as failure:
        return _record_failure(conflict, failure)
    with transaction.atomic():
        conflict = _locked_if_ours(conflict_id, conflict.claim)
        if conflict is None:
            return "stale"
        return _apply_verdict(conflict, verdict)


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
    _save(
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


def _record_failure(conflict: Conflict, failure: LLMCallFailed) -> str:
    attempts = conflict.attempts + 1
    final = not failure.retryable or attempts >= settings.HYGIENE_MAX_ATTEMPTS
    _save(
        conflict,
        attempts=attempts,
        error=failure.message[:2000],
        status=ConflictStatus.FAILED if final else ConflictStatus.PENDING,
        next_at=None
        if final
        else timezone.now() + timedelta(seconds=backoff_seconds(attempts, failure.retry_after)),
    )
    logger.warning("judging conflict %s failed: %s", conflict.public_id, failure.message)
    return "failed" if final else "retry"


def due_conflicts(*, limit: int = SWEEP_BATCH) -> list[tuple[int, str]]:
    """Claim pairs that are due: backoff over, no live lease, and waiting ones once a key is
    set; [(id, claim)]."""
    if not settings.ANTHROPIC_API_KEY:
        return []
    now = timezone.now()
    claimed = []
    with transaction.atomic():
        rows = (
            Conflict.objects.select_for_update(skip_locked=True)
            .filter(status__in=[ConflictStatus.PENDING, ConflictStatus.WAITING_FOR_KEY])
            .exclude(next_at__gt=now)
            .exclude(lease_until__gt=now)
            .order_by("id")[:limit]
        )
        for conflict in rows:
            conflict.status = ConflictStatus.PENDING
            claimed.append((conflict.id, new_claim(conflict)))
            conflict.save(update_fields=["status", "claim", "lease_until"])
    return claimed


def conflict_retry(*, conflict: Conflict) -> None:
    """A failed pair back in the queue with fresh attempts (the admin's action); the sweeper
    takes it on its next run."""
    Conflict.objects.filter(pk=conflict.pk, status=ConflictStatus.FAILED).update(
        status=ConflictStatus.PENDING, attempts=0, next_at=None, error="", claim=""
    )
