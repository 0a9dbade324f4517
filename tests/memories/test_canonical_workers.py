"""Canonicalization under concurrency: edits during a translation, locks, sweeps racing each other,
a task delivered twice, a lease that ran out, and a real worker killed mid-translation.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from django_q.conf import Conf
from django_q.models import Schedule

from memories.canonical import service as canonical
from memories.canonical import tasks
from memories.embeddings import embed_texts
from memories.models import Memory, Provenance, TranslationStatus
from tests.fakes.anthropic_api import (
    delay,
    status,
    tool_answer,
)
from tests.memories.canonical_support import (
    ENGLISH,
    GERMAN,
    VERBATIM,
    InThread,
    Worker,
    assert_pending_and_readable,
    blocking_step,
    detail,
    make_due,
    remember,
    worker_env,
)
from tests.served import wait_for

EDITED_GERMAN = "Wir deployen jeden Donnerstag vor dem Mittagessen auf die Produktionsumgebung."
EDITED_ENGLISH = "We deploy to production every Thursday before lunch."
STALE_ENGLISH = "We deploy to production every Friday after lunch (stale)."
# Not the same text as ENGLISH, but near enough to merge with it.
NEAR_ENGLISH = "We deploy to production every Friday after lunch time."


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


@pytest.mark.parametrize("twin", ["older", "newer"])
@pytest.mark.django_db(transaction=True)
def test_a_translation_waits_for_an_older_twin_and_never_for_a_newer_one(
    twin, kinds_seeded, tenancy, owner, fake_anthropic
):
    """Another transaction holds the near duplicate the translation would merge into (its own
    translation, an edit). Such waits only ever point to an older memory, so two translations
    that are each other's nearest neighbour cannot deadlock."""
    from django.db import connection, transaction

    fake_anthropic.script(tool_answer(ENGLISH))
    texts = [NEAR_ENGLISH, GERMAN] if twin == "older" else [GERMAN, NEAR_ENGLISH]
    ids = {text: remember(owner, text, tenancy.team).json()["id"] for text in texts}
    english = Memory.objects.get(public_id=ids[NEAR_ENGLISH])
    german = Memory.objects.get(public_id=ids[GERMAN])
    assert (english.pk < german.pk) == (twin == "older")

    with transaction.atomic():
        Memory.objects.select_for_update().get(pk=english.pk)
        in_flight = InThread(tasks.canonicalize, german.id, german.translation_claim)
        if twin == "newer":
            assert in_flight.join(timeout=10) == "done"
        else:

            def waiting_for_a_lock() -> bool:
                with connection.cursor() as cursor:
                    # Inside a transaction the statistics are read once unless cleared.
                    cursor.execute("SELECT pg_stat_clear_snapshot()")
                    cursor.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        " AND pid <> pg_backend_pid()"
                    )
                    return cursor.fetchone()[0] == 1

            wait_for(waiting_for_a_lock, timeout=10, what="the translation waiting for its twin")
    if twin == "older":
        assert in_flight.join() == "merged"

    german.refresh_from_db()
    english.refresh_from_db()
    assert german.content == ENGLISH and german.content_original == GERMAN
    assert english.valid
    # Merged into the older memory; beside a newer one held elsewhere, a duplicate for hygiene.
    assert german.valid is (twin == "newer")
    assert german.superseded_by_id == (english.pk if twin == "older" else None)


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


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_translation_loses_nothing(
    kinds_seeded, tenancy, owner, fake_anthropic, settings, tmp_path
):
    lease = 3
    settings.TRANSLATION_LEASE_SECONDS = lease
    Schedule.objects.all().delete()  # the test runs the sweeper itself, when it chooses
    env = worker_env(fake_anthropic, ZM_TRANSLATOR_TIMEOUT="30", ZM_TRANSLATION_LEASE=str(lease))
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
