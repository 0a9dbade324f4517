"""The no-LLM entity detector: its precision on the hand-labelled set (tests/data), and the
rules it keeps (bench/entities.py prints the figures)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from memories.entities.detect import detected, scanned
from memories.entities.names import dictionary_hits, name_key, text_keys

DATA = Path(__file__).resolve().parent.parent / "data" / "entities_labelled.json"


def _group(source: str) -> str:
    return source.rsplit(" ", 1)[0] if source.startswith("locomo") else source.split(" (")[0]


def test_precision_on_the_labelled_set_is_at_least_nine_in_ten():
    memories = json.loads(DATA.read_text(encoding="utf-8"))["memories"]
    assert len(memories) >= 200
    assert {memory["source"].split(" ", 1)[0] for memory in memories} == {"locomo", "transcripts"}
    known: dict[str, dict[str, str]] = defaultdict(dict)  # a group stands for a scope
    right = found_count = labelled = 0
    for memory in memories:
        scope = known[_group(memory["source"])]
        items, prose = scanned(memory["text"])
        keys = text_keys(prose)
        found = {item.key for item in items} | {key for key, _ in dictionary_hits(keys, scope)}
        scope.update((item.key, item.surface) for item in items)
        labels = {name_key(label) for label in memory["entities"]}
        right += len(found & labels)
        found_count += len(found)
        labelled += len(labels)
    precision, recall = right / found_count, right / labelled
    assert precision >= 0.9, (precision, recall)
    assert recall >= 0.7, (precision, recall)  # reported by the bench; this guards a collapse


def _found(text: str) -> dict[str, str]:
    return {item.surface: item.kind for item in detected(text)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See https://example.com/a/b. Then rest.", {"https://example.com/a/b": "url"}),
        ("Ping @ops-oncall about it.", {"@ops-oncall": "handle"}),
        ("Fixed in PAY-412 and acme/shop#17.", {"PAY-412": "ticket", "acme/shop#17": "ticket"}),
        ("See issue #88 first.", {"#88": "ticket"}),
        ("UTF-8 everywhere.", {"UTF-8": "identifier"}),
        (
            "Edit src/app/main.py and ~/.config/zm.toml.",
            {"src/app/main.py": "path", "~/.config/zm.toml": "path"},
        ),
        ("Call `select_for_update()` in the job.", {"select_for_update": "identifier"}),
        ("Reverted 0629d16 yesterday.", {"0629d16": "identifier"}),
        ("We met Sara Bareilles in Seattle.", {"Sara Bareilles": "name", "Seattle": "name"}),
        ('We watched "The Santa Clause" again.', {"The Santa Clause": "name"}),
        ("Caroline: Hey there!", {"Caroline": "name"}),
    ],
)
def test_what_the_detector_finds(text, expected):
    assert _found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday was fine. Monday we ship, in March or May.",  # sentence starts, calendar
        "Note: the export is slow.",  # a label, not a speaker
        "## Deploy Checklist For Production\nall good",  # a heading
        "Use and/or TCP/IP here.",  # prose slashes
        "Mail dana@example.com about it.",  # an address is not a handle
        "<user_query>\nrun it\n</user_query>",  # markup tags
        "Wir deployen jeden Freitag.",  # read without names when not English (below)
    ],
)
def test_what_the_detector_leaves_alone(text):
    names = not text.startswith("Wir")
    assert detected(text, names=names) == []


def test_a_known_name_inside_a_longer_path_is_not_a_mention_of_it():
    _, prose = scanned("Open /home/dev/projects/spotter/plan.md now")
    assert dictionary_hits(text_keys(prose), {"spotter": "spotter"}) == []
    _, prose = scanned("The spotter project ships today")
    assert dictionary_hits(text_keys(prose), {"spotter": "spotter"}) == [("spotter", "spotter")]
