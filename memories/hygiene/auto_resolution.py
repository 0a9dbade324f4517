"""Automatic resolution: which judged pairs are resolved without a person, and how. Pure functions
over the verdict and the two memories' authority, kind and age; no database.

- A duplicate at confidence ≥ HYGIENE_AUTO_DUPLICATE (0.90) is merged: the memory of lower
  authority (or, at equal authority, the older) is superseded and its provenance joins the
  other.
- A supersession at ≥ HYGIENE_AUTO_SUPERSEDE (0.95) retires the memory the judge says is
  replaced, with its provenance, unless that memory has the higher authority.
- A decision, convention, gotcha or preference written by a person or an agent (rank ≥ 1) is
  never retired automatically.
- Everything else that is a conflict (contradictions, lower confidence) goes to the review
  queue; complementary and unrelated pairs need nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from memories.kinds import GUIDANCE_KINDS
from memories.models import AUTHOR_RANKS as RANKS
from memories.models import Relation, Resolution
from zeromemory.core.actor import AGENT_RANK, CAPTURE_RANK

NOTHING_TO_DO = frozenset({Relation.COMPLEMENTARY, Relation.UNRELATED})


@dataclass(frozen=True)
class Standing:
    """What the rules know of a memory."""

    rank: int
    kind: str
    created_at: datetime
    pk: int


def standing(memory) -> Standing:
    return Standing(
        RANKS.get(memory.author_kind, CAPTURE_RANK), memory.kind_id, memory.created_at, memory.pk
    )


@dataclass(frozen=True)
class Decision:
    resolution: Resolution
    retire: str  # "a" or "b": the memory superseded


def protected(side: Standing) -> bool:
    return side.kind in GUIDANCE_KINDS and side.rank >= AGENT_RANK


def merge_loser(a: Standing, b: Standing) -> str:
    """Of two duplicates, the one to supersede: the lower rank, else the older."""
    if a.rank != b.rank:
        return "a" if a.rank < b.rank else "b"
    return "a" if (a.created_at, a.pk) <= (b.created_at, b.pk) else "b"


def automatic(*, relation: str, confidence: float, a: Standing, b: Standing) -> Decision | None:
    """The resolution to apply without a person, or None (review queue or nothing to do)."""
    sides = {"a": a, "b": b}
    if relation == Relation.DUPLICATE and confidence >= settings.HYGIENE_AUTO_DUPLICATE:
        decision = Decision(Resolution.MERGE, merge_loser(a, b))
    elif relation in (Relation.A_SUPERSEDES_B, Relation.B_SUPERSEDES_A) and (
        confidence >= settings.HYGIENE_AUTO_SUPERSEDE
    ):
        retire = "b" if relation == Relation.A_SUPERSEDES_B else "a"
        keep = "a" if retire == "b" else "b"
        if sides[retire].rank > sides[keep].rank:
            return None
        decision = Decision(Resolution(relation), retire)
    else:
        return None
    return None if protected(sides[decision.retire]) else decision
