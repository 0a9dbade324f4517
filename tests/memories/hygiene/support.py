"""What the hygiene tests share: memories written through remember(), a pair queued for the
judge, and the judge's scripted answers (record_relations tool calls on the fake Messages API)."""

from __future__ import annotations

from memories.hygiene import service
from memories.models import Conflict, ConflictStatus, Memory
from memories.services.remember import RememberInput, memory_remember
from tests.fakes.anthropic_api import Step, malformed_tool_input
from zeromemory.core.actor import Actor, Surface


def relation(name: str, confidence: float, rationale: str = "Scripted verdict.") -> Step:
    """The judge's answer on a call of one pair: a record_relations tool call."""
    return relations((name, confidence, rationale))


def relations(*verdicts: tuple) -> Step:
    """The judge's answer on a call of several pairs: (relation, confidence[, rationale]) for
    pair 1, 2, ... in order."""
    return malformed_tool_input(
        {
            "relations": [
                {
                    "pair": number,
                    "relation": verdict[0],
                    "confidence": verdict[1],
                    "rationale": verdict[2] if len(verdict) > 2 else "Scripted verdict.",
                }
                for number, verdict in enumerate(verdicts, start=1)
            ]
        }
    )


def write(user, content: str, scope, *, kind: str = "fact", author: str = "human") -> Memory:
    """A memory written by a person (a session), an agent (a token) or capture."""
    actor = Actor(user=user, surface=Surface.CAPTURE if author == "capture" else Surface.API)
    request = RememberInput(content=content, kind=kind, scope=scope.public_id, author_kind=author)
    return memory_remember(actor=actor, request=request).memory


def queued_pair(a: Memory, b: Memory) -> tuple[Conflict, str]:
    """A pair stored as the scan stores it, claimed as the sweeper claims it: (pair, claim)."""
    first, second = sorted((a, b), key=lambda memory: memory.pk)
    conflict = Conflict.objects.create(
        scope=first.scope, memory_a=first, memory_b=second, status=ConflictStatus.PENDING
    )
    claim = service.JUDGING.new_claim(conflict)
    conflict.save(update_fields=["claim", "lease_until"])
    return conflict, claim


def judged(a: Memory, b: Memory) -> tuple[Conflict, str]:
    """Queue the pair and judge it once (the next scripted step answers); (pair, outcome)."""
    conflict, claim = queued_pair(a, b)
    outcome = service.conflict_judge(conflict_id=conflict.id, claim=claim)
    conflict.refresh_from_db()
    return conflict, outcome


def fresh(*memories: Memory) -> list[Memory]:
    for memory in memories:
        memory.refresh_from_db()
    return list(memories)
