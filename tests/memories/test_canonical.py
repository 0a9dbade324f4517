"""Canonical English end to end: REST writes and reads, the django-q2 tasks, the sweeper.

The translator is the real anthropic SDK talking HTTP to the fake Messages API
(tests/fakes/anthropic_api.py); nothing of ours is patched. django-q2 runs a queued task inline
where a test asks for `sync_tasks` (its Conf is read at import time, hence the monkeypatch of
Conf.SYNC rather than a settings override), and a real `qcluster` process in the slow test.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.postgres.search import SearchQuery
from django_q.models import Schedule

from memories.canonical import tasks
from memories.embeddings import embed_texts
from memories.models import Memory, Provenance, TranslationStatus
from tests.fakes.anthropic_api import (
    tool_answer,
)
from tests.memories.canonical_support import (
    ENGLISH,
    ENGLISH_CODE,
    GERMAN,
    GERMAN_CODE,
    VERBATIM,
    assert_pending_and_readable,
    detail,
    prompts,
    remember,
    write,
)


def test_german_memory_is_answered_pending_then_translated(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    fake_anthropic.script(tool_answer(ENGLISH))

    with django_capture_on_commit_callbacks(execute=True):
        response = remember(owner, GERMAN, tenancy.team, verbatim=VERBATIM)
        # Answered at once: stored, pending, readable with the text as written; no LLM call yet.
        assert response.status_code == 201
        body = response.json()
        assert (body["translation_status"], body["content_lang"]) == ("pending", "de")
        assert body["content"] == GERMAN
        memory = Memory.objects.get(public_id=body["id"])
        assert_pending_and_readable(owner, memory, GERMAN)
        assert fake_anthropic.requests == []
        german_vector = np.array(memory.embedding)

    # The task queued on commit ran: one API call, and the memory is canonical English.
    assert len(fake_anthropic.requests) == 1
    memory.refresh_from_db()
    assert memory.content == ENGLISH
    assert memory.content_original == GERMAN
    assert memory.content_lang == "de"
    assert memory.translation_status == TranslationStatus.DONE
    assert memory.translation_attempts == 1
    assert (memory.translation_error, memory.translation_claim) == ("", "")
    assert memory.translation_next_at is None and memory.translation_lease_until is None
    vector = np.array(memory.embedding)
    assert np.allclose(vector, embed_texts([ENGLISH])[0], atol=1e-5)
    assert not np.allclose(vector, german_vector, atol=1e-3)

    body = detail(owner, memory)
    assert (body["content"], body["content_original"], body["has_original"]) == (
        ENGLISH,
        GERMAN,
        True,
    )
    # Verbatim stays in provenance as said, and it is never sent to the translator.
    [row] = body["provenance"]
    assert row["verbatim"] == VERBATIM
    assert VERBATIM not in fake_anthropic.requests[0].body.decode()
    assert Provenance.objects.get(memory=memory).verbatim == VERBATIM
    # English full-text search finds the canonical text.
    english_query = SearchQuery("production", config="english")
    assert Memory.objects.filter(pk=memory.pk, search_vector=english_query).exists()


def test_protected_spans_survive_translation(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    fake_anthropic.script(tool_answer(ENGLISH_CODE))

    memory = write(owner, GERMAN_CODE, tenancy.team, django_capture_on_commit_callbacks)

    memory.refresh_from_db()
    assert memory.translation_status == TranslationStatus.DONE
    assert memory.content == ENGLISH_CODE
    assert "`select_for_update(skip_locked=True)`" in memory.content
    assert "memories/canonical.py" in memory.content
    [prompt] = prompts(fake_anthropic)
    assert "memories/canonical.py" in prompt and "select_for_update(skip_locked=True)" in prompt


def test_english_memory_is_never_sent(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    memory = write(owner, ENGLISH_CODE, tenancy.team, django_capture_on_commit_callbacks)
    assert memory.translation_status == TranslationStatus.SKIPPED
    assert memory.content_lang == "en"
    assert fake_anthropic.requests == []


# --- faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "order", ["english first", "german first, translated later", "german translated first"]
)
def test_same_fact_in_german_and_english_ends_as_one_memory(
    order, tenancy, api, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    writer = api(tenancy.writer)
    fake_anthropic.script(tool_answer(ENGLISH))
    team = tenancy.team

    if order == "english first":
        english = write(owner, ENGLISH, team, django_capture_on_commit_callbacks)
        german = write(writer, GERMAN, team, django_capture_on_commit_callbacks, verbatim=VERBATIM)
    elif order == "german first, translated later":
        # The German write's task has not run yet (nothing is executed on commit here) when the
        # English write arrives; then the task runs with the claim it was queued with.
        response = remember(writer, GERMAN, team, verbatim=VERBATIM)
        german = Memory.objects.get(public_id=response.json()["id"])
        english = write(owner, ENGLISH, team, django_capture_on_commit_callbacks)
        assert english.pk != german.pk
        assert tasks.canonicalize(german.id, german.translation_claim) == "merged"
    else:
        german = write(writer, GERMAN, team, django_capture_on_commit_callbacks, verbatim=VERBATIM)
        english = write(owner, ENGLISH, team, django_capture_on_commit_callbacks)

    [survivor] = Memory.objects.filter(scope=team, valid=True)
    assert survivor.content == ENGLISH
    rows = list(Provenance.objects.filter(memory=survivor).order_by("id"))
    assert len(rows) == 2
    assert {row.created_by for row in rows} == {tenancy.owner, tenancy.writer}
    [german_row] = [row for row in rows if row.created_by == tenancy.writer]
    assert german_row.verbatim == VERBATIM
    body = detail(owner, survivor)
    assert len(body["provenance"]) == 2

    if order == "german translated first":
        # The German memory was English by the time the English write came: plain dedup.
        assert survivor.pk == german.pk and english.pk == german.pk
        assert survivor.content_original == GERMAN
        assert body["content_original"] == GERMAN
    else:
        # The translation merged the German memory into the English one, original kept.
        assert survivor.pk == english.pk
        german.refresh_from_db()
        assert german.valid is False and german.superseded_by_id == survivor.pk
        assert (german.content_original, german.content_lang) == (GERMAN, "de")
        assert german_row.absorbed is True and german_row.written_text == GERMAN
        [absorbed] = body["absorbed_memories"]
        assert absorbed["id"] == german.public_id
        assert (absorbed["content_original"], absorbed["content_lang"]) == (GERMAN, "de")
        assert GERMAN in [row["written_text"] for row in body["provenance"]]
        assert detail(owner, german)["state"] == "superseded"
    assert Memory.objects.filter(scope=team).count() == (
        1 if order == "german translated first" else 2
    )


# --- edits, claims and concurrency ----------------------------------------------------------


def test_the_sweeper_is_scheduled_every_minute(db):
    """One schedule sweeps every registered job, translation among them."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("memories.migrations.0027_one_job_sweeper")
    [schedule] = Schedule.objects.filter(func="memories.jobs.jobs_sweep")
    assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == (Schedule.MINUTES, 1, -1)
    assert not Schedule.objects.filter(func="memories.canonical.tasks.sweep_translations").exists()

    # Idempotent: running it again (after someone edited the schedule) keeps one, repaired.
    Schedule.objects.filter(pk=schedule.pk).update(minutes=30)
    migration.one_sweeper(apps, None)
    [again] = Schedule.objects.filter(name=schedule.name)
    assert again.pk == schedule.pk and again.minutes == 1


# --- a real worker, killed mid-translation --------------------------------------------------
