"""The labelled set of bench/recall.py and its 100,000 more memories, generated with a fixed seed.

The hand-written pairs live in bench/recall_pairs.json: `paraphrases` are (kind, memory, a query
sharing no English lexeme with it), `statements` are (what a memory says about an identifier,
the same said in other words). The identifiers are made up here; the distractors come from the
templates of bench/_recall_vocabulary.py.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from _recall_vocabulary import (
    ACTIONS,
    BEHAVIOURS,
    COMPONENTS,
    CONDITIONS,
    DISTRACTOR_TEMPLATES,
    KIND_WEIGHTS,
    PEOPLE,
    TECH,
    THINGS,
    TIMES,
)

SEED = 20261129
_PAIRS = json.loads((Path(__file__).parent / "recall_pairs.json").read_text(encoding="utf-8"))
PARAPHRASES = [tuple(row) for row in _PAIRS["paraphrases"]]
STATEMENTS = [tuple(row) for row in _PAIRS["statements"]]

# Identifiers: made-up words in the shapes of error codes, functions, files and flags.
SYLLABLES = [
    "zor",
    "vex",
    "qua",
    "lin",
    "dra",
    "mok",
    "tesh",
    "pli",
    "nor",
    "gav",
    "rux",
    "bel",
    "fen",
    "tor",
    "yam",
    "kli",
    "sud",
    "wep",
    "jon",
    "hix",
    "bra",
    "cus",
    "dol",
    "fim",
    "gor",
    "hul",
    "jas",
    "kev",
    "lom",
    "mur",
    "nix",
    "oda",
    "pev",
    "quo",
    "ris",
    "sap",
    "tul",
    "ulv",
    "vim",
    "wox",
    "yel",
    "zun",
]
ID_VERBS = [
    "flush",
    "sync",
    "load",
    "parse",
    "build",
    "merge",
    "emit",
    "fetch",
    "purge",
    "render",
    "resolve",
    "index",
]
ID_NOUNS = [
    "batch",
    "ledger",
    "queue",
    "cache",
    "token",
    "report",
    "invoice",
    "bundle",
    "cursor",
    "snapshot",
    "shard",
]
FOLDERS = [
    "billing",
    "search",
    "auth",
    "ingest",
    "export",
    "notify",
    "gateway",
    "reports",
    "jobs",
    "admin",
]
KEYWORD_MEANINGS = [
    "the upstream connection was reset mid-request",
    "the lock on the tenant row timed out",
    "a signature did not match the payload",
    "the quota for the day is used up",
    "the schema version is older than the client",
    "a required header was missing",
]
KEYWORD_FILE_FACTS = [
    "holds the retry policy for outbound calls",
    "is where the nightly reconciliation starts",
    "defines the mapping from plans to limits",
    "owns the cleanup of expired sessions",
]
KEYWORD_FLAG_EFFECTS = [
    "turn on verbose tracing",
    "cap the worker pool",
    "skip the warm-up step",
    "switch to the read replica",
]


@dataclass(frozen=True)
class Item:
    kind: str
    content: str
    scope: str  # "team" | "personal" | "foreign"


@dataclass(frozen=True)
class Query:
    text: str
    relevant: int  # index into the labelled memories
    type: str


def _nonsense(rng: random.Random, used: set[str], parts: int = 2) -> str:
    """A made-up word; two-syllable ones are unique (the labelled set's identifiers)."""
    while True:
        word = "".join(rng.choice(SYLLABLES) for _ in range(parts))
        if parts > 2:
            return word
        if word not in used:
            used.add(word)
            return word


def _identifier(rng: random.Random, used: set[str], style: str, parts: int = 2) -> str:
    word = _nonsense(rng, used, parts)
    if style == "function":
        return f"{rng.choice(ID_VERBS)}_{word}_{rng.choice(ID_NOUNS)}"
    if style == "file":
        return f"{rng.choice(FOLDERS)}/{word}_{rng.choice(ID_NOUNS)}.py"
    if style == "flag":
        return f"ZM_{word.upper()}_{rng.choice(ID_NOUNS).upper()}"
    if style == "code":
        return f"ERR_{word.upper()}_{rng.randint(100, 999)}"
    return f"E{rng.randint(1000, 9999)}{word[:2].upper()}"


def distractor(rng: random.Random, kind: str) -> str:
    component, component2 = rng.sample(COMPONENTS, 2)
    return rng.choice(DISTRACTOR_TEMPLATES[kind]).format(
        component=component,
        component2=component2,
        tech=rng.choice(TECH),
        action=rng.choice(ACTIONS),
        behaviour=rng.choice(BEHAVIOURS),
        condition=rng.choice(CONDITIONS),
        time=rng.choice(TIMES),
        person=rng.choice(PEOPLE),
        thing=rng.choice(THINGS),
        slug=component.replace(" ", "-").lower(),
        n=rng.randint(2, 90),
    )


def labelled_set() -> tuple[list[Item], list[Query]]:
    rng = random.Random(SEED)
    used: set[str] = set()
    items: list[Item] = []
    queries: list[Query] = []

    def add(kind: str, content: str, query: str, qtype: str) -> None:
        queries.append(Query(query, len(items), qtype))
        items.append(Item(kind, content, rng.choice(["team", "personal"])))

    for kind, content, query in PARAPHRASES:
        add(kind, content, query, "paraphrase")
    styles = ["code", "short", "function", "file", "flag"]
    for i in range(75):
        style = styles[i % len(styles)]
        ident = _identifier(rng, used, style)
        if style == "code" or style == "short":
            content = f"Error {ident} means {rng.choice(KEYWORD_MEANINGS)}; retry after a minute."
        elif style == "function":
            file = _identifier(rng, used, "file")
            content = f"{ident}() in {file} {rng.choice(KEYWORD_FILE_FACTS)}."
        elif style == "file":
            content = f"{ident} {rng.choice(KEYWORD_FILE_FACTS)}."
        else:
            content = f"Set {ident}=1 to {rng.choice(KEYWORD_FLAG_EFFECTS)}."
        add(rng.choice(["fact", "gotcha", "reference"]), content, ident, "keyword")
    mixed_styles = ["function", "file", "flag"]
    for n, (statement, paraphrase) in enumerate(STATEMENTS):
        for j in range(3):
            ident = _identifier(rng, used, mixed_styles[(n + j) % 3])
            subject = f"{ident}()" if ident.count("_") == 2 and "/" not in ident else ident
            if ident.startswith("ZM_"):
                subject = f"The flag {ident}"
            add(
                rng.choice(["fact", "gotcha", "convention"]),
                f"{subject} {statement}.",
                f"{ident} {paraphrase}",
                "mixed",
            )
    seen = {item.content for item in items}
    kinds = list(KIND_WEIGHTS)
    weights = list(KIND_WEIGHTS.values())
    while len(items) < 1110:
        kind = rng.choices(kinds, weights)[0]
        text = distractor(rng, kind)
        if text not in seen:
            seen.add(text)
            items.append(Item(kind, text, rng.choice(["team", "personal"])))
    return items, queries


def bulk_texts(count: int, taken: set[str]) -> list[Item]:
    """`count` more memories: short domain sentences, some long ones (windows), 3 scopes."""
    rng = random.Random(SEED + 1)
    used: set[str] = set()
    kinds = list(KIND_WEIGHTS)
    weights = list(KIND_WEIGHTS.values())
    items: list[Item] = []
    seen = set(taken)
    long_every = 333  # 300 long memories in 100,000
    while len(items) < count:
        kind = rng.choices(kinds, weights)[0]
        if len(items) % long_every == long_every - 1:
            text = " ".join(distractor(rng, rng.choice(kinds)) for _ in range(24))
        else:
            text = distractor(rng, kind)
            if rng.random() < 0.5:  # identifiers make most texts unique, as in real notes
                style = rng.choice(["function", "file", "code"])
                # Three syllables: never one of the labelled set's two-syllable names.
                text += f" See {_identifier(rng, used, style, parts=3)}."
        if text in seen:
            continue
        seen.add(text)
        scope = rng.choices(["team", "personal", "foreign"], [40, 30, 30])[0]
        items.append(Item(kind, text, scope))
    return items
