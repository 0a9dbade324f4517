"""mark_used: what an agent reports about the memories it was handed.

A used memory counts once per conversation (the `ReportedUse` pair is unique) and raises its usage
counters (`UsageCounter`, which recall's boost reads); a memory found wrong loses its counters, so
its boost is gone until it is used again. Callers obtain the memories through
`memories.selectors` (readable for a use, writable for a finding of wrong, as a challenge
needs), keep only those a read served to the same actor in that conversation, and open the
challenge themselves; this service trusts what it receives.

Weight: a use reported by a writer or admin of the memory's scope, through a credential not
restricted to scopes, has full weight. Any other use (a reader's, a restricted token's) is
light: it lifts the memory's usage counter only for its reporter's first `LIGHT_USES_PER_USER`
conversations with that memory, and never counts towards a rule candidate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection, transaction
from django.utils import timezone

from memories.models import Memory, ReportedUse, UsageCounter
from memories.rules.candidates import rules_propose
from zeromemory.core.actor import Actor

MAX_IDS = 100
# How many conversations of one reporter with light weight may raise a memory's usage counter.
LIGHT_USES_PER_USER = 3

_COUNT_USES = """
INSERT INTO memories_memoryusage (memory_id, uses, last_used_at)
SELECT unnest(%s::bigint[]), 1, %s
ON CONFLICT (memory_id) DO UPDATE
SET uses = memories_memoryusage.uses + 1, last_used_at = EXCLUDED.last_used_at
"""


def conversation_key(conversation_id: str | None) -> str:
    """The conversation a use counts in: the caller's id as sent, "" for none (all such uses of a
    memory count as one)."""
    return (conversation_id or "").strip()


@dataclass
class UseReport:
    counted: list[Memory] = field(default_factory=list)  # first use in this conversation
    not_counted: list[str] = field(default_factory=list)  # ids not served in this conversation
    repeated: list[Memory] = field(default_factory=list)  # already counted in it
    wrong: list[Memory] = field(default_factory=list)


def _lifts(actor: Actor, memory: Memory, full_weight: bool) -> bool:
    """Whether a new use (already stored) raises the memory's usage counter."""
    if full_weight:
        return True
    light = ReportedUse.objects.filter(
        memory=memory, used_by=actor.user, full_weight=False, wrong=False
    )
    return light.count() <= LIGHT_USES_PER_USER


def memories_mark_used(
    *,
    actor: Actor,
    used: list[Memory],
    wrong: list[Memory],
    conversation_id: str | None,
    full_weight: frozenset[int] = frozenset(),
    not_counted: list[str] | None = None,
) -> UseReport:
    """Record the uses of `used` (memories served to the actor in this conversation; those
    whose pk is in `full_weight` with full weight) and the findings of `wrong`."""
    conversation = conversation_key(conversation_id)
    report = UseReport(wrong=list({m.pk: m for m in wrong}.values()))
    report.not_counted = list(not_counted or [])
    wrong_ids = {m.pk for m in report.wrong}
    now = timezone.now()
    with transaction.atomic():
        lifted = []
        for memory in {m.pk: m for m in used if m.pk not in wrong_ids}.values():
            weighty = memory.pk in full_weight
            _, created = ReportedUse.objects.get_or_create(
                memory=memory,
                conversation=conversation,
                defaults={
                    "used_by": actor.user,
                    "used_by_token": actor.token,
                    "created_at": now,
                    "full_weight": weighty,
                },
            )
            (report.counted if created else report.repeated).append(memory)
            if created and _lifts(actor, memory, weighty):
                lifted.append(memory.pk)
        if lifted:
            with connection.cursor() as cursor:
                cursor.execute(_COUNT_USES, [lifted, now])
        for memory in report.wrong:
            ReportedUse.objects.update_or_create(
                memory=memory,
                conversation=conversation,
                defaults={"wrong": True, "used_by": actor.user, "used_by_token": actor.token},
            )
            UsageCounter.objects.update_or_create(
                memory=memory,
                defaults={"uses": 0, "last_used_at": None, "found_wrong_at": now},
            )
        rules_propose(memories=report.counted)
    return report
