"""The relevance floor: whether anything recall found is relevant to the query, and which hits.

Recall ranks; ranking alone always answers something, and in a scope with any memory the nearest
noise came back as if it were an answer. The floor is a rule over signals judged on their own
scales, never on the ranking's relative score (which puts the best of any pool at 1):

- similarity: the cosine between the query and the memory (its best window for a long one);
- coverage: the idf-weighted share of the query's terms the memory matches in full text (1 when
  it matches the whole query);
- unknown name: the query names something (a capitalised word that does not open a sentence:
  a person, a service, an acronym, an identifier) that no memory the caller may read mentions.
  A question about someone or something the scopes never name is about something else, however
  close the rest of its words come: "When did Dana's team move to Kafka?" in a scope that never
  says Dana or Kafka;
- an entity match: the query names a rare entity of the readable scopes (by its name or an
  alias) that the memory mentions (`entity_steps.py`); `Signals.entity_match` passes the floor
  on its own.

It has two levels, of the same shape (`Floor`: similar enough, or covering enough of the query):

1. the query's: something is relevant when at least one candidate passes the query's floor,
   `QUERY_FLOOR`, or `NAMED_QUERY_FLOOR` when the query has an unknown name: only a memory close
   in meaning (or matching most of the query's words) answers a question about a name the
   scopes never mention. Otherwise recall answers nothing (nothing_relevant);
2. the hits': once the query passed, each hit must still pass `HIT_FLOOR`, which leaves out the
   clear noise beside a real answer (an unrelated memory of a small scope).

The numbers were calibrated on LoCoMo's development half (questions asked in another
conversation's scope should find nothing, their own conversation's evidence should stay) and
checked on bench/recall.py's labelled set (paraphrases with no word in common with their memory
must stay found): bench/relevance.py --calibrate prints the grid, docs/benchmarks.md the figures.
They are properties of the embedding model and of BM25 weights, not of any data set's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# A capitalised word: a letter of an upper case, then letters, digits, "-", "_" or "'".
_CAPITALISED = re.compile(r"(?<![\w'-])[^\W\d_a-z][\w'-]*")
# What ends a sentence before a word, so that the word opens the next one.
_SENTENCE_END = ".?!:;\n"


def query_names(query: str) -> str:
    """The query's names, space-separated: its capitalised words that do not open a sentence
    ("I" aside). The statement turns them into lexemes as it does the query, and asks whether
    the readable memories hold them; the query itself is searched exactly as sent."""
    names = []
    for found in _CAPITALISED.finditer(query):
        before = query[: found.start()].rstrip(" \t\"'([{")
        word = found.group()
        if not before or before[-1] in _SENTENCE_END or word == "I" or word[0].islower():
            continue
        names.append(word)
    return " ".join(names)


@dataclass(frozen=True)
class Signals:
    """What a candidate's relevance rests on, each on its own scale."""

    similarity: float  # cosine, -1 to 1
    coverage: float  # idf-weighted share of the query's terms matched in full text, 0 to 1
    unknown_name: bool = False  # the query's: it names something no readable memory mentions
    entity_match: bool = False  # the memory mentions a rare entity the query names


@dataclass(frozen=True)
class Floor:
    """A candidate passes with a cosine of `similar`, or a coverage of `covered`."""

    similar: float
    covered: float

    def passes(self, signals: Signals) -> bool:
        if signals.entity_match:
            return True
        return signals.similarity >= self.similar or signals.coverage >= self.covered


# Calibrated by bench/relevance.py --calibrate (docs/benchmarks.md, "Relevance floor").
QUERY_FLOOR = Floor(similar=0.25, covered=0.5)
NAMED_QUERY_FLOOR = Floor(similar=0.45, covered=0.5)
HIT_FLOOR = Floor(similar=0.25, covered=0.2)


def relevant_hits(
    signals: Sequence[Signals],
    *,
    query_floor: Floor = QUERY_FLOOR,
    named_query_floor: Floor = NAMED_QUERY_FLOOR,
    hit_floor: Floor = HIT_FLOOR,
) -> list[bool]:
    """For each candidate of one query, whether it is relevant (all false when nothing is).
    The floors are the product's unless the bench's calibration tries others."""
    if not signals:
        return []
    floor = named_query_floor if signals[0].unknown_name else query_floor
    if not any(floor.passes(candidate) for candidate in signals):
        return [False] * len(signals)
    return [hit_floor.passes(candidate) for candidate in signals]
