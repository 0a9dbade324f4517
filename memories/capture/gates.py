"""Which extracted candidates become memories: only the sure ones, each with its evidence.

In order, a candidate is dropped when it is malformed, of a kind outside the catalogue (or a
task: captured text is not a to-do list), below the confidence floor (0.7; facts and episodes
from transcripts need 0.85, since a conversation is full of passing remarks), or when its
evidence is not found in the chunk (after folding white space). At most ten per chunk remain,
the most confident first. A chunk with under 40 letters of prose (code, paths and identifiers
masked) is skipped before any call.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from memories.canonical.protected import mask_protected
from memories.entities.given import GivenEntity, given_leniently
from memories.kinds import kind_slugs
from memories.models import ChunkSource
from zeromemory.core.text import comparable

MIN_PROSE_LETTERS = 40
MIN_CONFIDENCE = 0.7
MIN_TRANSCRIPT_FACT_CONFIDENCE = 0.85
MAX_PER_CHUNK = 10
EXCLUDED_KINDS = frozenset({"task"})


@dataclass(frozen=True)
class Candidate:
    content: str
    kind: str
    confidence: float
    evidence: str
    # What the model says the memory is about; a malformed entry is dropped, not the memory.
    entities: tuple[GivenEntity, ...] = ()


def has_enough_prose(text: str) -> bool:
    masked = mask_protected(text)
    return sum(1 for char in masked if char.isalpha()) >= MIN_PROSE_LETTERS


def _parsed(raw: Any) -> Candidate | None:
    if not isinstance(raw, dict):
        return None
    content, kind = raw.get("content"), raw.get("kind")
    confidence, evidence = raw.get("confidence"), raw.get("evidence")
    if not all(isinstance(v, str) and v.strip() for v in (content, kind, evidence)):
        return None
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    if not 0 <= confidence <= 1:
        return None
    return Candidate(
        content.strip(),
        kind.strip(),
        float(confidence),
        evidence.strip(),
        given_leniently(raw.get("entities")),
    )


def extractable_kinds() -> list[str]:
    """The catalogue's kinds an extraction may propose."""
    return [slug for slug in kind_slugs() if slug not in EXCLUDED_KINDS]


def apply_gates(
    *, candidates: list[Any], chunk_text: str, source_kind: str
) -> tuple[list[Candidate], Counter[str]]:
    """The candidates to write, most confident first, and why each other one was dropped."""
    kinds = set(extractable_kinds())
    haystack = comparable(chunk_text)
    dropped: Counter[str] = Counter()
    kept: list[Candidate] = []
    for raw in candidates:
        candidate = _parsed(raw)
        if candidate is None:
            dropped["malformed"] += 1
        elif candidate.kind not in kinds:
            dropped["kind"] += 1
        elif candidate.confidence < _floor(candidate.kind, source_kind):
            dropped["low_confidence"] += 1
        elif comparable(candidate.evidence) not in haystack:
            dropped["evidence_not_found"] += 1
        else:
            kept.append(candidate)
    kept.sort(key=lambda c: c.confidence, reverse=True)
    if len(kept) > MAX_PER_CHUNK:
        dropped["over_cap"] += len(kept) - MAX_PER_CHUNK
        kept = kept[:MAX_PER_CHUNK]
    return kept, dropped


def _floor(kind: str, source_kind: str) -> float:
    if source_kind == ChunkSource.TRANSCRIPT and kind in ("fact", "episode"):
        return MIN_TRANSCRIPT_FACT_CONFIDENCE
    return MIN_CONFIDENCE
