"""Canonicalization when the LLM fails: each fault leaves the memory stored, readable and queued
with backoff; a refusal that cannot change fails at once; without a key nothing is spent.
"""

from __future__ import annotations

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from memories.canonical import tasks
from memories.models import Memory, TranslationStatus
from tests.fakes.anthropic_api import (
    delay,
    malformed_tool_input,
    status,
    text_only,
    tool_answer,
)
from tests.memories.canonical_support import (
    ENGLISH,
    ENGLISH_CODE,
    GERMAN,
    GERMAN_CODE,
    VERBATIM,
    assert_pending_and_readable,
    assert_retry_at,
    detail,
    make_due,
    write,
)
from tests.served import free_port


def _closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


FAULTS = {
    "dropped identifier": (
        lambda: tool_answer(
            "Use `select_for_update(skip_locked=True)` in the canonical module when two workers "
            "edit the same row."
        ),
        "memories/canonical.py",
        30,
    ),
    "429 with retry-after": (
        lambda: status(429, headers={"retry-after": "300"}),
        "429",
        300,
    ),
    "500": (lambda: status(500), "500", 30),
    "timeout": (lambda: delay(5, then=tool_answer(ENGLISH_CODE)), "timeout", 30),
    "malformed tool input": (
        lambda: malformed_tool_input({"text": ENGLISH_CODE}),
        "`english`",
        30,
    ),
    "text-only answer": (
        lambda: text_only(f"Here is the translation: {ENGLISH_CODE}"),
        "no record_english_text tool call",
        30,
    ),
    "connection refused": (None, "could not reach", 30),
}


@pytest.mark.parametrize("fault", FAULTS)
def test_a_failed_attempt_keeps_the_memory_pending_with_backoff(
    fault, tenancy, owner, fake_anthropic, settings, sync_tasks, django_capture_on_commit_callbacks
):
    make_step, message, backoff = FAULTS[fault]
    settings.TRANSLATION_BACKOFF_SECONDS = 30
    settings.TRANSLATOR_TIMEOUT_SECONDS = 1
    if make_step is None:
        settings.ANTHROPIC_BASE_URL = _closed_port_url()
    else:
        fake_anthropic.script(make_step())

    before = timezone.now()
    memory = write(
        owner, GERMAN_CODE, tenancy.team, django_capture_on_commit_callbacks, verbatim=VERBATIM
    )
    after = timezone.now()

    memory.refresh_from_db()
    assert memory.translation_status == TranslationStatus.PENDING
    assert memory.translation_attempts == 1
    assert message in memory.translation_error
    assert (memory.content, memory.content_original) == (GERMAN_CODE, "")
    assert memory.translation_claim == "" and memory.translation_lease_until is None
    assert_retry_at(memory, before, after, backoff)
    body = assert_pending_and_readable(owner, memory, GERMAN_CODE)
    assert body["translation_attempts"] == 1 and message in body["translation_error"]
    assert body["provenance"][0]["verbatim"] == VERBATIM
    # Not due before the backoff is over: the sweeper leaves it alone.
    assert tasks.sweep_translations() == 0


def test_retries_back_off_exponentially_then_fail(
    tenancy, owner, fake_anthropic, settings, sync_tasks, django_capture_on_commit_callbacks
):
    settings.TRANSLATION_MAX_ATTEMPTS = 3
    settings.TRANSLATION_BACKOFF_SECONDS = 10
    fake_anthropic.script(status(500), status(503), status(529))

    before = timezone.now()
    memory = write(owner, GERMAN, tenancy.team, django_capture_on_commit_callbacks)
    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("pending", 1)
    assert_retry_at(memory, before, timezone.now(), 10)

    make_due(memory)
    before = timezone.now()
    assert tasks.sweep_translations() == 1
    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("pending", 2)
    assert "503" in memory.translation_error
    assert_retry_at(memory, before, timezone.now(), 20)

    make_due(memory)
    assert tasks.sweep_translations() == 1
    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("failed", 3)
    assert "529" in memory.translation_error
    assert memory.translation_next_at is None

    # Failed is final for the sweeper; the memory is still there, readable, as written.
    make_due(memory)
    assert tasks.sweep_translations() == 0
    assert len(fake_anthropic.requests) == 3
    body = detail(owner, memory)
    assert (body["content"], body["translation_status"], body["state"]) == (
        GERMAN,
        "failed",
        "valid",
    )


def test_a_success_after_failures_clears_the_error(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    fake_anthropic.script(status(500), tool_answer(ENGLISH))
    memory = write(owner, GERMAN, tenancy.team, django_capture_on_commit_callbacks)
    make_due(memory)
    assert tasks.sweep_translations() == 1
    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("done", 2)
    assert (memory.content, memory.content_original, memory.translation_error) == (
        ENGLISH,
        GERMAN,
        "",
    )


def test_without_a_key_it_waits_without_spending_attempts(
    tenancy, owner, fake_anthropic, settings, sync_tasks, django_capture_on_commit_callbacks
):
    settings.ANTHROPIC_API_KEY = ""

    memory = write(owner, GERMAN, tenancy.team, django_capture_on_commit_callbacks)
    assert tasks.sweep_translations() == 0
    # Its claim was released; an empty claim claims nothing.
    assert tasks.canonicalize(memory.id, "") == "not-claimed"

    memory.refresh_from_db()
    assert memory.translation_status == TranslationStatus.PENDING
    assert memory.translation_attempts == 0
    assert "ANTHROPIC_API_KEY" in memory.translation_error
    assert memory.translation_claim == "" and memory.translation_lease_until is None
    assert_pending_and_readable(owner, memory, GERMAN)
    assert fake_anthropic.requests == []

    # A key is configured: the next sweep translates it.
    settings.ANTHROPIC_API_KEY = "test-key"
    fake_anthropic.script(tool_answer(ENGLISH))
    assert tasks.sweep_translations() == 1
    memory.refresh_from_db()
    assert (memory.translation_status, memory.content, memory.content_original) == (
        "done",
        ENGLISH,
        GERMAN,
    )
    assert memory.translation_attempts == 1 and memory.translation_error == ""


def test_a_task_that_finds_no_key_releases_the_memory(
    tenancy, owner, fake_anthropic, settings, django_capture_on_commit_callbacks
):
    # Queued while a key was set (not sync: it waits in the broker), run after it was removed.
    memory = write(owner, GERMAN, tenancy.team, django_capture_on_commit_callbacks)
    assert OrmQ.objects.count() == 1
    claim = Memory.objects.get(pk=memory.pk).translation_claim
    settings.ANTHROPIC_API_KEY = ""

    assert tasks.canonicalize(memory.id, claim) == "no-key"

    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("pending", 0)
    assert memory.translation_claim == "" and memory.translation_next_at is None
    assert fake_anthropic.requests == []


# --- the same fact in two languages ---------------------------------------------------------


@pytest.mark.parametrize("code", [400, 401, 403, 404])
def test_a_refusal_that_cannot_change_fails_at_once(
    code, tenancy, owner, fake_anthropic, settings, sync_tasks, django_capture_on_commit_callbacks
):
    """A bad key or a refused request is not retried by backoff: the admin's retry brings it
    back once the cause is fixed."""
    settings.TRANSLATION_MAX_ATTEMPTS = 6
    fake_anthropic.script(status(code))
    memory = write(owner, GERMAN, tenancy.team, django_capture_on_commit_callbacks)
    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("failed", 1)
    assert str(code) in memory.translation_error and memory.translation_next_at is None
    make_due(memory)
    assert tasks.sweep_translations() == 0
    assert len(fake_anthropic.requests) == 1
