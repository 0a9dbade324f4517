"""Canonical English end to end: REST writes and reads, the django-q2 tasks, the sweeper.

The translator is the real anthropic SDK talking HTTP to the fake Messages API
(tests/fakes/anthropic_api.py); nothing of ours is patched. django-q2 runs a queued task inline
where a test asks for `sync_tasks` (its Conf is read at import time, hence the monkeypatch of
Conf.SYNC rather than a settings override), and a real `qcluster` process in the slow test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.contrib.postgres.search import SearchQuery
from django.db import connection, connections
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import OrmQ, Schedule

from memories.canonical import service as canonical
from memories.canonical import tasks
from memories.embeddings import embed_texts
from memories.models import Memory, Provenance, TranslationStatus
from tests.fakes.anthropic_api import (
    Step,
    delay,
    malformed_tool_input,
    status,
    text_only,
    tool_answer,
)

GERMAN = "Wir deployen jeden Freitag nach dem Mittagessen auf die Produktionsumgebung."
ENGLISH = "We deploy to production every Friday after lunch."

GERMAN_CODE = (
    "Benutze `select_for_update(skip_locked=True)` in memories/canonical.py, wenn zwei Worker "
    "dieselbe Zeile bearbeiten."
)
ENGLISH_CODE = (
    "Use `select_for_update(skip_locked=True)` in memories/canonical.py when two workers edit "
    "the same row."
)

VERBATIM = "Freitags nach dem Mittagessen, nie vorher."


# --- helpers --------------------------------------------------------------------------------


@pytest.fixture
def sync_tasks(monkeypatch):
    """Queued django-q2 tasks run inline, in the calling thread."""
    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.fixture
def owner(tenancy, api):
    return api(tenancy.owner)


def remember(client, content, scope, **extra):
    body = {"content": content, "kind": "decision", "scope": scope.public_id, **extra}
    return client.post("/api/v1/memories", body, format="json")


def write(client, content, scope, capture, **extra) -> Memory:
    """Remember through REST and run what was queued on commit (the translation, when sync)."""
    with capture(execute=True):
        response = remember(client, content, scope, **extra)
    assert response.status_code in (200, 201), response.json()
    return Memory.objects.get(public_id=response.json()["id"])


def detail(client, memory: Memory) -> dict:
    response = client.get(f"/api/v1/memories/{memory.public_id}")
    assert response.status_code == 200, response.json()
    return response.json()


def make_due(memory: Memory) -> None:
    """Time passes: the backoff is over and any lease has run out."""
    past = timezone.now() - timedelta(seconds=1)
    Memory.objects.filter(pk=memory.pk).update(
        translation_next_at=past, translation_lease_until=past
    )


def assert_pending_and_readable(client, memory: Memory, original: str) -> dict:
    """Nothing lost: the memory reads with its text as written, pending."""
    body = detail(client, memory)
    assert body["content"] == original
    assert body["translation_status"] == "pending"
    assert body["state"] == "valid"
    listed = client.get("/api/v1/memories", {"translation_status": "pending"}).json()["results"]
    assert memory.public_id in [item["id"] for item in listed]
    return body


def assert_retry_at(memory: Memory, before, after, seconds: float) -> None:
    assert memory.translation_next_at is not None
    earliest = before + timedelta(seconds=seconds) - timedelta(seconds=1)
    latest = after + timedelta(seconds=seconds) + timedelta(seconds=1)
    assert earliest <= memory.translation_next_at <= latest, (
        memory.translation_next_at - before
    ).total_seconds()


def prompts(fake) -> list[str]:
    return [request.json["messages"][0]["content"] for request in fake.requests]


def blocking_step(release: threading.Event, english: str) -> Step:
    """A tool answer held back until the test sets `release` (a translation in flight)."""

    def answer(request, stopping):
        release.wait(20)
        return tool_answer(english).answer(request, stopping)

    return Step(f"blocked, then {english!r}", answer)


class InThread:
    """Run a task function in its own thread (with its own database connection)."""

    def __init__(self, fn, *args) -> None:
        self.result: object = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, *args), daemon=True)
        self._thread.start()

    def _run(self, fn, *args) -> None:
        try:
            self.result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in join()
            self.error = exc
        finally:
            connections.close_all()

    def join(self, timeout: float = 20) -> object:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the task did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def wait_for(predicate, *, timeout: float, what: str, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


# --- the happy path -------------------------------------------------------------------------


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


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


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

EDITED_GERMAN = "Wir deployen jeden Donnerstag vor dem Mittagessen auf die Produktionsumgebung."
EDITED_ENGLISH = "We deploy to production every Thursday before lunch."
STALE_ENGLISH = "We deploy to production every Friday after lunch (stale)."


@pytest.mark.django_db(transaction=True)
def test_an_edit_during_translation_discards_the_stale_translation(
    kinds_seeded, tenancy, owner, fake_anthropic, monkeypatch
):
    release = threading.Event()
    fake_anthropic.script(blocking_step(release, STALE_ENGLISH), tool_answer(EDITED_ENGLISH))
    memory = Memory.objects.get(public_id=remember(owner, GERMAN, tenancy.team).json()["id"])
    try:
        in_flight = InThread(tasks.canonicalize, memory.id, memory.translation_claim)
        wait_for(lambda: fake_anthropic.requests, timeout=10, what="the translation request")

        # A person edits the memory while the translation of the old text is in flight; the
        # edit's own translation runs inline.
        monkeypatch.setattr(Conf, "SYNC", True)
        response = owner.patch(
            f"/api/v1/memories/{memory.public_id}", {"content": EDITED_GERMAN}, format="json"
        )
        assert response.status_code == 200, response.json()
    finally:
        release.set()
    assert in_flight.join() == "stale"

    memory.refresh_from_db()
    assert memory.content == EDITED_ENGLISH
    assert memory.content_original == EDITED_GERMAN
    assert memory.translation_status == TranslationStatus.DONE
    assert memory.translation_attempts == 1
    assert STALE_ENGLISH not in memory.content
    [version] = detail(owner, memory)["versions"]
    assert version["content"] == GERMAN  # the text before the edit is kept, untranslated
    assert len(fake_anthropic.requests) == 2


@pytest.mark.django_db(transaction=True)
def test_an_edit_while_failed_requeues_with_fresh_attempts(
    kinds_seeded, tenancy, owner, fake_anthropic, settings, sync_tasks
):
    settings.TRANSLATION_MAX_ATTEMPTS = 1
    fake_anthropic.script(status(500), tool_answer(EDITED_ENGLISH))
    memory = Memory.objects.get(public_id=remember(owner, GERMAN, tenancy.team).json()["id"])
    memory.refresh_from_db()
    assert memory.translation_status == TranslationStatus.FAILED

    owner.patch(f"/api/v1/memories/{memory.public_id}", {"content": EDITED_GERMAN}, format="json")

    memory.refresh_from_db()
    assert (memory.translation_status, memory.translation_attempts) == ("done", 1)
    assert (memory.content, memory.content_original) == (EDITED_ENGLISH, EDITED_GERMAN)


@pytest.mark.django_db(transaction=True)
def test_a_locked_memory_is_skipped_not_waited_for(kinds_seeded, tenancy, owner, fake_anthropic):
    from django.db import transaction

    fake_anthropic.script(tool_answer(ENGLISH))
    memory = Memory.objects.get(public_id=remember(owner, GERMAN, tenancy.team).json()["id"])
    claim = memory.translation_claim
    make_due(memory)

    with transaction.atomic():
        # Another worker holds the row (it is claiming it right now).
        Memory.objects.select_for_update().get(pk=memory.pk)
        assert InThread(canonical.due_for_translation).join(timeout=10) == []
        assert InThread(tasks.canonicalize, memory.id, claim).join(timeout=10) == "not-claimed"
    assert fake_anthropic.requests == []

    # Once the lock is gone the queued claim is good.
    assert tasks.canonicalize(memory.id, claim) == "done"


@pytest.mark.django_db(transaction=True)
def test_concurrent_sweeps_claim_each_memory_once(kinds_seeded, tenancy, owner, fake_anthropic):
    ids = []
    for number in range(8):
        text = f"Der Export Nummer {number} läuft jede Nacht um {number + 1} Uhr auf dem Server."
        ids.append(remember(owner, text, tenancy.team).json()["id"])
    pending = Memory.objects.filter(public_id__in=ids, translation_status="pending")
    assert pending.count() == 8
    for memory in pending:
        make_due(memory)

    start = threading.Barrier(4)

    def sweep():
        start.wait()
        return canonical.due_for_translation()

    runs = [InThread(sweep) for _ in range(4)]
    claimed = [item for run in runs for item in run.join()]

    assert sorted(memory_id for memory_id, _ in claimed) == sorted(m.id for m in pending)
    current = dict(Memory.objects.filter(public_id__in=ids).values_list("id", "translation_claim"))
    assert all(current[memory_id] == claim for memory_id, claim in claimed)
    assert canonical.due_for_translation() == []  # every one is leased now


@pytest.mark.django_db(transaction=True)
def test_a_task_delivered_twice_translates_once(kinds_seeded, tenancy, owner, fake_anthropic):
    release = threading.Event()
    fake_anthropic.script(blocking_step(release, ENGLISH))
    memory = Memory.objects.get(public_id=remember(owner, GERMAN, tenancy.team).json()["id"])
    claim = memory.translation_claim
    try:
        first = InThread(tasks.canonicalize, memory.id, claim)
        wait_for(lambda: fake_anthropic.requests, timeout=10, what="the translation request")
        # The broker hands the same task to a second worker while the first is still at it.
        assert tasks.canonicalize(memory.id, claim) == "not-claimed"
    finally:
        release.set()
    assert first.join() == "done"
    assert len(fake_anthropic.requests) == 1
    memory.refresh_from_db()
    assert (memory.content, memory.translation_attempts) == (ENGLISH, 1)


@pytest.mark.django_db(transaction=True)
def test_a_worker_whose_lease_ran_out_cannot_overwrite_the_one_that_took_over(
    kinds_seeded, tenancy, owner, fake_anthropic, monkeypatch
):
    release = threading.Event()
    fake_anthropic.script(blocking_step(release, STALE_ENGLISH), tool_answer(ENGLISH))
    memory = Memory.objects.get(public_id=remember(owner, GERMAN, tenancy.team).json()["id"])
    try:
        slow = InThread(tasks.canonicalize, memory.id, memory.translation_claim)
        wait_for(lambda: fake_anthropic.requests, timeout=10, what="the translation request")
        make_due(memory)  # the slow worker's lease runs out
        monkeypatch.setattr(Conf, "SYNC", True)
        assert tasks.sweep_translations() == 1  # the sweeper takes over (inline)
        memory.refresh_from_db()
        assert (memory.translation_status, memory.content) == ("done", ENGLISH)
    finally:
        release.set()
    assert slow.join() == "stale"
    memory.refresh_from_db()
    assert (memory.content, memory.content_original, memory.translation_attempts) == (
        ENGLISH,
        GERMAN,
        1,
    )


# --- the schedule ---------------------------------------------------------------------------


def test_the_sweeper_is_scheduled_every_minute(db):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("memories.migrations.0005_sweeper_schedule")
    [schedule] = Schedule.objects.filter(func="memories.canonical.tasks.sweep_translations")
    assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == (Schedule.MINUTES, 1, -1)

    # Idempotent: running it again (after someone edited the schedule) keeps one, repaired.
    Schedule.objects.filter(pk=schedule.pk).update(minutes=30)
    migration.create_sweeper(apps, None)
    [again] = Schedule.objects.filter(name=schedule.name)
    assert again.pk == schedule.pk and again.minutes == 1


# --- a real worker, killed mid-translation --------------------------------------------------


def _database_url(settings_dict: dict) -> str:
    """The test database as a DATABASE_URL; the host may be a socket directory (a path)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password, safe='')}" if password else user
    host = quote(settings_dict.get("HOST") or "localhost", safe="")
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{quote(settings_dict['NAME'], safe='')}"


class Worker:
    """`manage.py qcluster` in its own process group, against the test database."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, str(Path(django_settings.BASE_DIR) / "manage.py"), "qcluster"],
            cwd=django_settings.BASE_DIR,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
        with contextlib.suppress(ProcessLookupError):  # processes a graceful stop left behind
            os.killpg(self.process.pid, signal.SIGKILL)
        self._log.close()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_translation_loses_nothing(
    kinds_seeded, tenancy, owner, fake_anthropic, settings, tmp_path
):
    lease = 3
    settings.TRANSLATION_LEASE_SECONDS = lease
    Schedule.objects.all().delete()  # the test runs the sweeper itself, when it chooses
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(connection.settings_dict),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ZM_TRANSLATOR_TIMEOUT": "30",
        "ZM_TRANSLATION_LEASE": str(lease),
        "ZM_Q_WORKERS": "1",
        "ZM_TESTING": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    log = tmp_path / "qcluster.log"
    fake_anthropic.script(delay(60, then=tool_answer(STALE_ENGLISH)))

    first = Worker(env, log)
    second: Worker | None = None
    try:
        response = remember(owner, GERMAN, tenancy.team, verbatim=VERBATIM)
        assert response.status_code == 201
        memory = Memory.objects.get(public_id=response.json()["id"])
        wait_for(
            lambda: fake_anthropic.requests or first.process.poll() is not None,
            timeout=30,
            what="the worker's translation request",
        )
        assert first.process.poll() is None, log.read_text()
        first.kill()  # kill -9 the whole cluster while the translation call is in flight

        # Still stored, readable, pending, nothing recorded as an attempt.
        body = assert_pending_and_readable(owner, memory, GERMAN)
        assert (body["translation_attempts"], body["content_original"]) == (0, "")
        assert body["provenance"][0]["verbatim"] == VERBATIM

        fake_anthropic.script(tool_answer(ENGLISH))
        second = Worker(env, log)
        # Once the dead worker's lease is over, the sweeper queues the memory again.
        wait_for(tasks.sweep_translations, timeout=lease + 10, what="the sweeper's claim")

        def translated() -> bool:
            assert second.process.poll() is None, log.read_text()
            return Memory.objects.filter(pk=memory.pk, translation_status="done").exists()

        wait_for(translated, timeout=40, what="the fresh worker's translation", interval=0.3)
    finally:
        first.stop()
        if second is not None:
            second.stop()

    [memory] = Memory.objects.all()
    assert (memory.content, memory.content_original, memory.content_lang) == (
        ENGLISH,
        GERMAN,
        "de",
    )
    assert memory.translation_attempts == 1 and memory.valid
    assert np.allclose(memory.embedding, embed_texts([ENGLISH])[0], atol=1e-5)
    [row] = Provenance.objects.filter(memory=memory)
    assert (row.verbatim, row.created_by, row.absorbed) == (VERBATIM, tenancy.owner, False)
    assert len(fake_anthropic.requests) == 2


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
