"""The scan: neighbour pairs within a scope, the pair key, idempotent rescans, a German memory
found with its English twin once canonical, and the schedule."""

from __future__ import annotations

import importlib
from datetime import timedelta

from django.apps import apps
from django.utils import timezone
from django_q.models import Schedule

from memories.hygiene import scan, tasks
from memories.models import Conflict, ConflictStatus, HygieneScan
from tests.factories import make_scope
from tests.fakes.anthropic_api import tool_answer
from tests.memories.hygiene.support import relation, write

DEPLOY = "We deploy to production every Friday after lunch."
DEPLOY_GERMAN = "Wir deployen jeden Freitag nach dem Mittagessen auf die Produktionsumgebung."
DEPLOY_TRANSLATED = "Every Friday after lunch we deploy to the production environment."


def test_near_neighbours_in_one_scope_make_a_pair(pair, tenancy):
    write(tenancy.owner, "Frontend components are named in PascalCase.", tenancy.team)
    elsewhere = make_scope(owner=tenancy.owner, slug="elsewhere")
    write(tenancy.owner, pair[0].content + " Really.", elsewhere)
    record = scan.hygiene_scan()
    [conflict] = Conflict.objects.all()
    assert (conflict.memory_a_id, conflict.memory_b_id) == (pair[0].pk, pair[1].pk)
    assert conflict.scope == tenancy.team and conflict.similarity >= 0.78
    assert conflict.status == ConflictStatus.WAITING_FOR_KEY  # no key in the test settings
    assert (record.subjects, record.pairs_new) == (4, 1)


def test_a_rescan_skips_pairs_already_queued_or_judged(pair, tenancy):
    scan.hygiene_scan()
    assert scan.hygiene_scan().subjects == 0  # nothing changed since
    # Every memory changed: the same pair is found again and skipped by its key.
    HygieneScan.objects.update(started_at=timezone.now() - timedelta(days=1))
    Conflict.objects.update(status=ConflictStatus.RESOLVED)
    write(tenancy.owner, "Frontend components are named in PascalCase.", tenancy.team)
    HygieneScan.objects.all().delete()
    record = scan.hygiene_scan()
    assert record.pairs_found >= 1 and record.pairs_new == 0
    assert Conflict.objects.count() == 1


def test_a_german_memory_meets_its_english_twin_once_translated(
    tenancy, kinds_seeded, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    english = write(tenancy.owner, DEPLOY, tenancy.team)
    fake_anthropic.script(tool_answer(DEPLOY_TRANSLATED))
    with django_capture_on_commit_callbacks(execute=True):
        german = write(tenancy.writer, DEPLOY_GERMAN, tenancy.team)
    german.refresh_from_db()
    assert german.translation_status == "done" and german.valid  # not merged at 0.97
    fake_anthropic.script(relation("duplicate", 0.95))
    with django_capture_on_commit_callbacks(execute=True):
        tasks.scan()
    [conflict] = Conflict.objects.all()
    assert {conflict.memory_a_id, conflict.memory_b_id} == {english.pk, german.pk}
    assert conflict.status == ConflictStatus.RESOLVED  # judged inline, merged
    # Same rank: the older (English) one is superseded; the other keeps both provenances and
    # its original German text.
    english.refresh_from_db()
    assert english.valid is False and english.superseded_by_id == german.pk
    assert german.content_original == DEPLOY_GERMAN
    assert german.provenance.count() == 2


def test_a_pending_translation_waits_for_a_later_scan(tenancy, kinds_seeded):
    write(tenancy.owner, DEPLOY, tenancy.team)
    write(tenancy.writer, DEPLOY_GERMAN, tenancy.team)  # pending: no key
    assert scan.hygiene_scan().subjects == 1
    assert not Conflict.objects.exists()


def test_without_a_key_pairs_wait_and_nothing_is_resolved(pair, fake_anthropic, settings):
    settings.ANTHROPIC_API_KEY = ""
    tasks.scan()
    [conflict] = Conflict.objects.all()
    assert conflict.status == ConflictStatus.WAITING_FOR_KEY
    assert tasks.sweep_conflicts() == 0 and fake_anthropic.requests == []
    assert all(memory.valid for memory in pair)


def test_once_a_key_is_set_the_sweeper_judges_waiting_pairs(
    pair, fake_anthropic, settings, sync_tasks
):
    settings.ANTHROPIC_API_KEY = ""
    tasks.scan()
    settings.ANTHROPIC_API_KEY = "test-key"
    fake_anthropic.script(relation("contradiction", 0.8))
    assert tasks.sweep_conflicts() == 1
    conflict = Conflict.objects.get()
    assert (conflict.status, conflict.verdict) == ("open", "contradiction")


def test_the_scan_runs_when_its_interval_has_passed(pair, settings):
    settings.HYGIENE_INTERVAL_MINUTES = 30
    assert scan.scan_due()
    tasks.scan_if_due()
    assert not scan.scan_due()
    assert scan.scan_due(now=timezone.now() + timedelta(minutes=31))


def test_the_scan_and_the_sweeper_are_scheduled(db):
    Schedule.objects.filter(name__in=["hygiene-scan", "sweep-jobs"]).delete()
    importlib.import_module("memories.migrations.0010_hygiene_schedules").create(apps, None)
    importlib.import_module("memories.migrations.0027_one_job_sweeper").one_sweeper(apps, None)
    funcs = dict(Schedule.objects.values_list("name", "func"))
    assert funcs["hygiene-scan"] == "memories.hygiene.tasks.scan_if_due"
    # The judge's pairs are swept by the one schedule of every job.
    assert funcs["sweep-jobs"] == "memories.jobs.jobs_sweep"
    assert "sweep-conflicts" not in funcs


def test_the_scan_runs_on_demand(pair):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("hygiene_scan", stdout=out)
    assert "1 new" in out.getvalue()


def test_the_index_and_the_exact_comparison_find_the_same_pairs(pair, tenancy):
    write(tenancy.owner, "Frontend components are named in PascalCase.", tenancy.team)
    write(tenancy.owner, "Frontend component names use PascalCase.", tenancy.team)
    by_scope = scan.subjects_by_scope(None)
    ids = by_scope[tenancy.team.pk]
    exact = {(p.a, p.b): p.similarity for p in scan.exact_pairs(tenancy.team.pk, ids)}
    indexed = {(p.a, p.b): p.similarity for p in scan.neighbour_pairs(ids)}
    assert exact.keys() == indexed.keys() and len(exact) >= 2
    assert all(abs(exact[key] - indexed[key]) < 1e-3 for key in exact)


def test_a_scan_past_its_time_goes_on_in_the_next_run(pair, tenancy, settings):
    write(tenancy.owner, "Frontend components are named in PascalCase.", tenancy.team)
    write(tenancy.owner, "Frontend component names use PascalCase.", tenancy.team)
    settings.HYGIENE_INTERVAL_MINUTES = 60
    first = scan.hygiene_scan(slice_size=1, seconds=0)  # one subject, then out of time
    assert first.finished_at is None and first.subjects == 1
    assert scan.scan_due()  # an unfinished scan goes on at the schedule's next minute
    runs = 1
    while scan.hygiene_scan(slice_size=1, seconds=0).finished_at is None:
        runs += 1
        assert runs < 10
    record = HygieneScan.objects.get()  # one scan, spread over several runs
    assert record.subjects == 4 and runs >= 3
    spread = set(Conflict.objects.values_list("memory_a_id", "memory_b_id"))

    # The same memories in one run find the same pairs.
    Conflict.objects.all().delete()
    HygieneScan.objects.all().delete()
    assert scan.hygiene_scan().subjects == 4
    assert set(Conflict.objects.values_list("memory_a_id", "memory_b_id")) == spread
    assert len(spread) == 2
    assert not scan.scan_due()


def test_what_changes_during_a_scan_is_the_next_scans(pair, tenancy):
    first = scan.hygiene_scan(slice_size=1, seconds=0)
    later = write(
        tenancy.owner, "The staging database is wiped on Mondays at 06:00 UTC.", tenancy.team
    )
    while first.finished_at is None:
        first = scan.hygiene_scan(slice_size=1, seconds=0)
    assert first.subjects == 2  # the two memories of `pair`, not the one written meanwhile
    second = scan.hygiene_scan()
    assert second.subjects == 1 and second.since == first.started_at
    assert Conflict.objects.filter(memory_b=later).exists()


def test_a_scan_that_stores_many_pairs_leaves_the_planner_counting_them(tenancy):
    """A first scan stores thousands of pairs in what was an empty table; recall asks of every
    hit whether a pair names it, and plans made from an empty table's statistics read it whole.
    The scan gathers the table's statistics itself rather than waiting for autovacuum."""
    from django.db import connection

    for n in range(40):
        write(
            tenancy.owner,
            f"The nightly export job {n} runs at two in the morning on the reporting server.",
            tenancy.team,
        )
    record = scan.hygiene_scan()
    stored = Conflict.objects.count()
    assert record.pairs_new == stored > 50
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = 'memories_conflict'::regclass")
        assert cursor.fetchone()[0] == stored
