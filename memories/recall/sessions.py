"""The same-conversation lift: memories written in the conversation (session) of a strong hit
rank a little higher.

What was said in one session tends to belong together: the turn that names the place and the one
that says when; the decision and the gotcha found while making it. A memory's conversations are
its provenance's `conversation_id`s (the session an agent, the watcher or an import named on the
write; an absorbed write adds its own). The lift is bounded on every side:

- only the best `STRONG_HITS` candidates that pass the relevance floor, and score at least
  `STRONG_SHARE` of the best one, lend their conversations;
- it looks only at the statement's candidates (k + `EXTRA_CANDIDATES` rows), never fetches more;
- a candidate sharing a conversation with a strong hit has its score multiplied by
  1 + `LIFT`, so it passes only hits that scored less than that much above it, never clearly
  better ones; at most `MAX_LIFTED` candidates are lifted per recall;
- a lifted candidate counts as relevant (it is relevant through the hit it came with), so the
  floor keeps it; with no strong hit there is no lift, and an empty answer stays empty.

bench/locomo.py --ablation measures it (each LoCoMo session is one conversation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

STRONG_HITS = 3
STRONG_SHARE = 0.5
EXTRA_CANDIDATES = 20
LIFT = 0.3
MAX_LIFTED = 3


class Candidate(Protocol):
    score: float
    relevant: bool
    lifted: bool
    conversations: list[str]


C = TypeVar("C", bound=Candidate)


def lift_same_conversation(candidates: Sequence[C]) -> list[C]:
    """The candidates (best first) reordered by the lift, the lifted ones marked."""
    if not candidates:
        return list(candidates)
    best = candidates[0].score
    strong = [c for c in candidates[:STRONG_HITS] if c.relevant and c.score >= STRONG_SHARE * best]
    sessions = {conversation for c in strong for conversation in c.conversations}
    if not sessions:
        return list(candidates)
    strong_ids = {id(c) for c in strong}
    lifted = 0
    for candidate in candidates:
        if lifted == MAX_LIFTED:
            break
        if id(candidate) in strong_ids or not sessions.intersection(candidate.conversations):
            continue
        candidate.score *= 1 + LIFT
        candidate.lifted = True
        candidate.relevant = True
        lifted += 1
    return sorted(candidates, key=lambda c: -c.score)
