"""One owner for what a memory derives from its text: the same text written through every door
(remember, edit, the translation that canonicalizes a German memory, an import of an export, a
move) gives the memory the same hash, embedding and windows, and the language and translation
status each door's history says.

Through REST, with the translator (the real SDK) against the fake Messages API; the derived
columns are read from the rows the requests wrote.
"""

from __future__ import annotations

import numpy as np

from memories.models import Memory, MemoryWindow
from tests.factories import make_scope
from tests.fakes.anthropic_api import tool_answer
from tests.memories.canonical_support import GERMAN, remember

# Long enough for windows (past the model's 256 tokens), so they are compared too.
LONG = " ".join(
    f"Step {n}: the deploy script in scripts/deploy.sh checks the migrations, drains the "
    f"queue named jobs-{n}, and restarts the web hosts one by one."
    for n in range(1, 16)
)


def _written(response) -> Memory:
    assert response.status_code in (200, 201), response.json()
    return Memory.objects.get(public_id=response.json()["id"])


def _facts(memory: Memory) -> dict:
    memory.refresh_from_db()
    windows = MemoryWindow.objects.filter(memory=memory).order_by("position")
    return {
        "content": memory.content,
        "hash": memory.content_hash,
        "embedding": np.array(memory.embedding),
        "windows": [(w.start_char, w.end_char, np.array(w.embedding)) for w in windows],
    }


def _same(a: dict, b: dict) -> None:
    assert (a["content"], a["hash"]) == (b["content"], b["hash"])
    assert np.allclose(a["embedding"], b["embedding"], atol=1e-5)
    assert [w[:2] for w in a["windows"]] == [w[:2] for w in b["windows"]]
    for (_, _, mine), (_, _, theirs) in zip(a["windows"], b["windows"], strict=True):
        assert np.allclose(mine, theirs, atol=1e-5)


def test_every_door_derives_the_same_facts_from_the_same_text(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    scopes = {
        name: make_scope(owner=tenancy.owner, slug=name)
        for name in ("written", "edited", "translated", "imported", "moved")
    }

    # remember: English, so no translation is due and no claim is held.
    written = _written(remember(owner, LONG, scopes["written"]))
    facts = _facts(written)
    assert facts["windows"], "the text is long enough for windows"
    assert (written.content_lang, written.translation_status) == ("en", "skipped")
    assert (written.content_original, written.translation_claim) == ("", "")

    # edit: another text becomes the same text.
    edited = _written(remember(owner, "A placeholder to be edited.", scopes["edited"]))
    response = owner.patch(f"/api/v1/memories/{edited.public_id}", {"content": LONG}, format="json")
    assert response.status_code == 200, response.json()
    _same(_facts(edited), facts)
    assert (edited.content_lang, edited.translation_status) == ("en", "skipped")
    assert edited.content_revision == 2

    # the translation: a German memory whose English is the same text.
    fake_anthropic.script(tool_answer(LONG))
    with django_capture_on_commit_callbacks(execute=True):
        translated = _written(remember(owner, GERMAN, scopes["translated"]))
        assert (translated.content_lang, translated.translation_status) == ("de", "pending")
        assert translated.translation_claim, "a memory waiting for translation holds a claim"
    _same(_facts(translated), facts)
    assert (translated.content_lang, translated.translation_status) == ("de", "done")
    assert (translated.content_original, translated.translation_claim) == (GERMAN, "")

    # an import of an export: both memories arrive as they were.
    for source in ("written", "translated"):
        archive = owner.get(f"/api/v1/scopes/{scopes[source].public_id}/export")
        assert archive.status_code == 200
        response = owner.post(
            f"/api/v1/scopes/{scopes['imported'].public_id}/import-export",
            b"".join(archive.streaming_content),
            content_type="application/zip",
        )
        assert response.status_code in (200, 201), response.json()
    imported = Memory.objects.filter(scope=scopes["imported"]).order_by("id")
    assert [m.content for m in imported] == [LONG], "the same text in one scope is one memory"
    _same(_facts(imported[0]), facts)

    # a move: the copy in the target scope carries the language and original of the translation.
    response = owner.post(
        "/api/v1/memories/move",
        {
            "memory_ids": [translated.public_id],
            "to_scope": scopes["moved"].public_id,
            "confirm": True,
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    moved = Memory.objects.get(scope=scopes["moved"])
    _same(_facts(moved), facts)
    assert (moved.content_lang, moved.translation_status, moved.content_original) == (
        "de",
        "done",
        GERMAN,
    )
    translated.refresh_from_db()
    assert not translated.valid and translated.validity_periods.get().replaced_by == moved
