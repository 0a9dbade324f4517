"""Judging queued pairs, off the request path: a job of the engine (`memories.jobs`: claim and
lease, attempts, backoff, the sweeper), declared here.

1. before any call: a pair whose memories are no longer both valid needs none (cleared); a pair
   whose texts are the same once normalized is a duplicate without a call; a pair whose scope
   spent the day's judge budget (ZM_HYGIENE_DAILY_TOKENS) waits, queued, for the next UTC day;
   without a key the pair waits (`waiting_for_key`) without spending an attempt;
2. the call: one Messages API call for up to ZM_HYGIENE_PAIRS_PER_CALL pairs of one scope,
   outside any transaction, its tokens recorded in the scope's spend;
3. apply, for each pair in its own transaction while the claim is still ours: record the
   verdict, then `auto_resolution`'s rules either resolve the pair (add-only, audited), open it
   for review, or clear it.

The queue is fair: the sweeper claims pairs round robin over the scopes' owners, and over each
owner's scopes, a call's worth of pairs of a scope at a time, so that one team's bulk import
waits behind nobody's first pairs and nobody waits behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories import selectors, spend
from memories.hygiene import auto_resolution
from memories.hygiene.judge import SAME_TEXT, Side, Verdict, judge_pairs, same_text
from memories.hygiene.review import resolve_automatically
from memories.hygiene.scan import ScopeScan, scope_scan
from memories.jobs import Job, JobSettings, job_register
from memories.models import Conflict, ConflictStatus, LlmPath
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ValidationFailed
from zeromemory.core.llm import LLMCallFailed

OVER_BUDGET = "The scope's daily judge token budget is spent; judging resumes tomorrow."


def _side(memory) -> Side:
    return Side(
        kind=memory.kind_id, content=memory.content, created=f"{memory.created_at:%Y-%m-%d}"
    )


def _before(conflict: Conflict) -> str | None:
    if not (conflict.memory_a.valid and conflict.memory_b.valid):
        JUDGING.finish(conflict, status=ConflictStatus.CLEARED, judged_at=timezone.now())
        return "cleared"
    if same_text(_side(conflict.memory_a), _side(conflict.memory_b)):
        return JUDGING.settle(conflict, SAME_TEXT)
    if spend.over_budget(path=LlmPath.JUDGE, scope_id=conflict.scope_id):
        JUDGING.finish(conflict, next_at=spend.next_utc_day(), error=OVER_BUDGET)
        return "deferred"
    return None


def _judge_many(conflicts: list[Conflict]) -> list[Verdict | LLMCallFailed]:
    judgement = judge_pairs(
        pairs=[(_side(conflict.memory_a), _side(conflict.memory_b)) for conflict in conflicts]
    )
    spend.spend_record(path=LlmPath.JUDGE, scope_id=conflicts[0].scope_id, tokens=judgement.tokens)
    return judgement.verdicts


def _judge(conflict: Conflict) -> Verdict:
    [verdict] = _judge_many([conflict])
    if isinstance(verdict, LLMCallFailed):
        raise verdict
    return verdict


def _apply_verdict(conflict: Conflict, verdict: Verdict) -> str:
    a, b = conflict.memory_a, conflict.memory_b
    decision = None
    if a.valid and b.valid:
        decision = auto_resolution.automatic(
            relation=verdict.relation,
            confidence=verdict.confidence,
            a=auto_resolution.standing(a),
            b=auto_resolution.standing(b),
        )
    if verdict.relation in auto_resolution.NOTHING_TO_DO or not (a.valid and b.valid):
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


_FAIR_ORDER_SQL = """
WITH due AS (
    SELECT c.id, c.scope_id, s.owner_id,
           row_number() OVER (PARTITION BY c.scope_id ORDER BY c.id) - 1 AS in_scope
    FROM memories_conflict c JOIN scopes_scope s ON s.id = c.scope_id
    WHERE c.status = ANY(%(statuses)s)
      AND (c.next_at IS NULL OR c.next_at <= %(now)s)
      AND (c.lease_until IS NULL OR c.lease_until <= %(now)s)
), ranked AS (
    SELECT id, row_number() OVER (
        PARTITION BY owner_id ORDER BY in_scope / %(per_call)s, scope_id, id
    ) AS turn
    FROM due
)
SELECT id FROM ranked ORDER BY turn, id LIMIT %(limit)s
"""


def _fair_order(statuses: list[str], now: datetime, limit: int) -> list[int]:
    """Due pairs, round robin over owners, and over each owner's scopes a call's worth at a time."""
    with connection.cursor() as cursor:
        cursor.execute(
            _FAIR_ORDER_SQL,
            {
                "statuses": statuses,
                "now": now,
                "per_call": settings.HYGIENE_PAIRS_PER_CALL,
                "limit": limit,
            },
        )
        return [row_id for (row_id,) in cursor.fetchall()]


JUDGING = job_register(
    Job(
        name="judging",
        model=Conflict,
        task="memories.hygiene.tasks.judge",
        task_name="judge",
        settings=JobSettings(
            prefix="HYGIENE", caller="HYGIENE", timeout=60, daily_tokens=1_000_000
        ),
        spend_path=LlmPath.JUDGE,
        before=_before,
        call=_judge,
        apply=_apply_verdict,
        waiting_status=ConflictStatus.WAITING_FOR_KEY,
        related=("memory_a", "memory_b", "scope"),
        batch=200,
        order=_fair_order,
        many_task="memories.hygiene.tasks.judge_many",
        call_group="scope_id",
        per_call_setting="HYGIENE_PAIRS_PER_CALL",
    )
)


def conflict_judge(*, conflict_id: int, claim: str) -> str:
    """Judge one claimed pair; returns what happened (for logs and tests)."""
    [outcome] = conflicts_judge(claims=[(conflict_id, claim)])
    return outcome


def conflicts_judge(*, claims: list[tuple[int, str]]) -> list[str]:
    """Judge claimed pairs of one scope in one call; what happened to each, in order."""
    return JUDGING.run_many(claims=claims, call_many=_judge_many)


def due_conflicts(*, limit: int | None = None) -> list[tuple[int, str]]:
    """Claim pairs that are due, in the fair order: backoff over, no live lease, and waiting
    ones once a key is set; [(id, claim)]."""
    return JUDGING.due(limit=limit)


def sweep_conflicts() -> int:
    """Claim what is due and queue it, a call's worth of pairs of one scope per task."""
    return JUDGING.sweep()


def conflict_retry(*, conflict: Conflict) -> str | None:
    """A failed pair back in the queue with fresh attempts (the admin's action)."""
    return JUDGING.retry(row=conflict)


def _scan_position(*, actor: Actor, scope: Scope, cursor: str | None) -> int:
    """The id a share of the scope's scan starts after: 0 without a cursor, else the cursor's
    memory, which must be one of the scope's that the caller reads (a 400 naming `cursor`
    otherwise, the same whether the id is malformed, missing or another scope's)."""
    if not cursor:
        return 0
    position = (
        selectors.readable_memories(actor)
        .filter(scope=scope, public_id=cursor)
        .values_list("id", flat=True)
        .first()
    )
    if position is None:
        raise ValidationFailed(
            "cursor",
            _("Not a cursor of this scope's scan: send the next_cursor of its previous answer."),
        )
    return position


@dataclass(frozen=True)
class ScopeScanned:
    scan: ScopeScan
    awaiting_judgement: int  # the scope's pairs queued for the judge (new or earlier)
    judge_tokens_today: int
    judge_budget: int  # tokens a day for the scope; 0: no budget
    over_budget: bool  # judging of the scope waits for the next UTC day


def scope_scan_now(*, actor: Actor, scope: Scope, cursor: str | None = None) -> ScopeScanned:
    """An admin's scan of one scope now, a share of ZM_HYGIENE_SCOPE_SCAN_SUBJECTS subjects
    after `cursor` (the `next_cursor` of the previous share: its last subject's memory id), so
    a caller that asks again while `more` compares every changed subject once; its new pairs go
    to the judge when the transaction commits, judged inside the scope's daily judge budget
    (over it they wait for the next day)."""
    scan = scope_scan(
        scope_id=scope.pk,
        slice_size=settings.HYGIENE_SCOPE_SCAN_SUBJECTS,
        after_id=_scan_position(actor=actor, scope=scope, cursor=cursor),
    )
    if scan.pairs_new:
        transaction.on_commit(sweep_conflicts)
    waiting = Conflict.objects.filter(
        scope=scope, status__in=(ConflictStatus.PENDING, ConflictStatus.WAITING_FOR_KEY)
    ).count()
    return ScopeScanned(
        scan=scan,
        awaiting_judgement=waiting,
        judge_tokens_today=spend.spent_today(path=LlmPath.JUDGE, scope_id=scope.pk),
        judge_budget=spend.budget_of(LlmPath.JUDGE),
        over_budget=spend.over_budget(path=LlmPath.JUDGE, scope_id=scope.pk),
    )
