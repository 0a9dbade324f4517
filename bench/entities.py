"""Benchmark of the no-LLM entity detector on tests/data/entities_labelled.json.

Run from the repository root: `python bench/entities.py` (`--misses` lists what it got wrong).
It prints figures and never fails: precision >= 0.9 is asserted by
tests/memories/test_entities_detect.py.

What runs is what a write runs, without the database: `detect.scanned` on each memory, and the
dictionary match (`names.dictionary_hits`) against the names found in the earlier memories of
the same group (a conversation or a transcript file stands for one scope). A detection is right
when its key (`names.name_key`) is a label's key; precision is over detections, recall over
labels, each memory's keys counted once.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from memories.entities.detect import scanned  # noqa: E402
from memories.entities.names import dictionary_hits, name_key, text_keys  # noqa: E402

DATA = REPO_ROOT / "tests" / "data" / "entities_labelled.json"


def group_of(source: str) -> str:
    """The scope a memory stands in: its conversation, or its transcript file."""
    return source.rsplit(" ", 1)[0] if source.startswith("locomo") else source.split(" (")[0]


def run(memories: list[dict]) -> list[tuple[dict, dict[str, str], set[str]]]:
    """(memory, {key: kind} found, label keys) for each memory, in order, each group with its
    own growing dictionary."""
    known: dict[str, dict[str, str]] = defaultdict(dict)
    results = []
    for memory in memories:
        scope = known[group_of(memory["source"])]
        items, prose = scanned(memory["text"])
        keys = text_keys(prose)
        for item in items:
            keys.setdefault(item.key, item.surface)
        found = {item.key: item.kind for item in items}
        for key, _ in dictionary_hits(keys, scope):
            found.setdefault(key, "dictionary")
        for item in items:
            scope.setdefault(item.key, item.surface)
        labels = {name_key(label) for label in memory["entities"]}
        results.append((memory, found, labels))
    return results


def report(results, *, misses: bool) -> None:
    totals: dict[str, Counter] = defaultdict(Counter)
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for memory, found, labels in results:
        corpus = memory["source"].split(" ", 1)[0]
        for name in (corpus, "all"):
            totals[name]["tp"] += len(found.keys() & labels)
            totals[name]["fp"] += len(found.keys() - labels)
            totals[name]["fn"] += len(labels - found.keys())
        for key, kind in found.items():
            by_kind[kind]["tp" if key in labels else "fp"] += 1
        if misses and (found.keys() ^ labels):
            print(
                f"#{memory['id']} false: {sorted(found.keys() - labels)} "
                f"missed: {sorted(labels - found.keys())}"
            )
    print(f"{'set':<12}{'memories':>9}{'labels':>8}{'found':>7}{'precision':>11}{'recall':>8}")
    counts = Counter(memory["source"].split(" ", 1)[0] for memory, _, _ in results)
    counts["all"] = len(results)
    for name, figures in sorted(totals.items()):
        found = figures["tp"] + figures["fp"]
        labelled = figures["tp"] + figures["fn"]
        print(
            f"{name:<12}{counts[name]:>9}{labelled:>8}{found:>7}"
            f"{figures['tp'] / max(found, 1):>11.3f}{figures['tp'] / max(labelled, 1):>8.3f}"
        )
    print(
        "\nby kind found: "
        + ", ".join(f"{kind} {c['tp']}/{c['tp'] + c['fp']}" for kind, c in sorted(by_kind.items()))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list each memory's errors")
    args = parser.parse_args()
    memories = json.loads(DATA.read_text(encoding="utf-8"))["memories"]
    started = time.perf_counter()
    results = run(memories)
    elapsed = time.perf_counter() - started
    report(results, misses=args.misses)
    print(
        f"\n{len(memories)} memories in {elapsed * 1000:.0f} ms "
        f"({elapsed / len(memories) * 1e6:.0f} µs a memory, detection and n-grams)"
    )


if __name__ == "__main__":
    main()
