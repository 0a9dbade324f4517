"""A background job is declared once: its settings are read from its declaration (with the
environment variables users have in their .env files), `.env.example` lists them, and the one
scheduled sweeper queues every declared job's due rows."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django_q.models import OrmQ, Schedule

from memories.jobs import jobs_registered
from memories.models import Chunk, Conflict, ConflictStatus, TranslationStatus
from tests.memories.canonical_support import GERMAN, make_due
from tests.memories.capture.support import claude_code_chunk, ingest
from tests.memories.hygiene.support import write

ENV_EXAMPLE = Path(__file__).resolve().parents[2] / ".env.example"


def by_name() -> dict:
    return {job.name: job for job in jobs_registered()}


def test_every_job_is_registered_when_the_app_loads():
    assert set(by_name()) == {"translation", "extraction", "judging"}


def test_each_jobs_variables_keep_the_names_users_have_in_their_env_files():
    jobs = by_name()
    assert jobs["translation"].settings.variables() == {
        "TRANSLATOR_MODEL": "ZM_TRANSLATOR_MODEL",
        "TRANSLATOR_TIMEOUT_SECONDS": "ZM_TRANSLATOR_TIMEOUT",
        "TRANSLATION_MAX_ATTEMPTS": "ZM_TRANSLATION_MAX_ATTEMPTS",
        "TRANSLATION_LEASE_SECONDS": "ZM_TRANSLATION_LEASE",
        "TRANSLATION_DAILY_TOKENS": "ZM_TRANSLATION_DAILY_TOKENS",
    }
    assert jobs["extraction"].settings.variables() == {
        "EXTRACTOR_MODEL": "ZM_EXTRACTOR_MODEL",
        "EXTRACTOR_TIMEOUT_SECONDS": "ZM_EXTRACTOR_TIMEOUT",
        "EXTRACTION_MAX_ATTEMPTS": "ZM_EXTRACTION_MAX_ATTEMPTS",
        "EXTRACTION_LEASE_SECONDS": "ZM_EXTRACTION_LEASE",
        "EXTRACTION_DAILY_TOKENS": "ZM_EXTRACTION_DAILY_TOKENS",
    }
    assert jobs["judging"].settings.variables() == {
        "HYGIENE_MODEL": "ZM_HYGIENE_MODEL",
        "HYGIENE_TIMEOUT_SECONDS": "ZM_HYGIENE_TIMEOUT",
        "HYGIENE_MAX_ATTEMPTS": "ZM_HYGIENE_MAX_ATTEMPTS",
        "HYGIENE_LEASE_SECONDS": "ZM_HYGIENE_LEASE",
        "HYGIENE_DAILY_TOKENS": "ZM_HYGIENE_DAILY_TOKENS",
    }


def test_a_jobs_settings_are_read_from_its_declaration(monkeypatch):
    jobs = by_name()
    # The defaults users have known (README, .env.example), without any variable set.
    for name in ("ZM_TRANSLATOR_TIMEOUT", "ZM_TRANSLATION_LEASE", "ZM_EXTRACTION_DAILY_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    assert jobs["translation"].settings.read() == {
        "TRANSLATOR_MODEL": "claude-haiku-4-5",
        "TRANSLATOR_TIMEOUT_SECONDS": 30,
        "TRANSLATION_MAX_ATTEMPTS": 6,
        "TRANSLATION_LEASE_SECONDS": 90,
        "TRANSLATION_DAILY_TOKENS": 1_000_000,
    }
    assert jobs["extraction"].settings.read()["EXTRACTION_DAILY_TOKENS"] == 2_000_000
    assert jobs["extraction"].settings.read()["EXTRACTOR_TIMEOUT_SECONDS"] == 120
    # The variables' names are the ones users have in their .env files.
    monkeypatch.setenv("ZM_HYGIENE_TIMEOUT", "10")
    monkeypatch.setenv("ZM_HYGIENE_MODEL", "claude-sonnet-4-5")
    monkeypatch.setenv("ZM_HYGIENE_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("ZM_HYGIENE_DAILY_TOKENS", "0")
    assert jobs["judging"].settings.read() == {
        "HYGIENE_MODEL": "claude-sonnet-4-5",
        "HYGIENE_TIMEOUT_SECONDS": 10,
        "HYGIENE_MAX_ATTEMPTS": 2,
        "HYGIENE_LEASE_SECONDS": 70,  # the timeout + 60 when unset
        "HYGIENE_DAILY_TOKENS": 0,
    }
    monkeypatch.setenv("ZM_HYGIENE_LEASE", "300")
    assert jobs["judging"].settings.read()["HYGIENE_LEASE_SECONDS"] == 300
    monkeypatch.setenv("ZM_HYGIENE_MAX_ATTEMPTS", "0")
    with pytest.raises(ValueError, match="ZM_HYGIENE_MAX_ATTEMPTS"):
        jobs["judging"].settings.read()


def test_the_settings_hold_each_jobs_settings():
    for job in jobs_registered():
        for name in job.settings.variables():
            assert hasattr(django_settings, name), name


def test_env_example_lists_every_jobs_variable_with_its_default():
    listed = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            name, value = line.split("=", 1)
            listed[name.strip()] = value.strip()
    for job in jobs_registered():
        declared = job.settings
        for variable in declared.variables().values():
            assert variable in listed, f"{variable} ({job.name}) is missing from .env.example"
        prefix, caller = declared.prefix, declared.caller
        assert listed[f"ZM_{caller}_MODEL"] == declared.model
        assert listed[f"ZM_{caller}_TIMEOUT"] == str(declared.timeout)
        assert listed[f"ZM_{prefix}_MAX_ATTEMPTS"] == str(declared.max_attempts)
        assert listed[f"ZM_{prefix}_LEASE"] == ""  # unset: the timeout + 60
        assert listed[f"ZM_{prefix}_DAILY_TOKENS"] == str(declared.daily_tokens)


def test_the_one_schedule_sweeps_every_jobs_due_rows(tenancy, kinds_seeded, api, settings):
    """Without a key nothing is due; once one is set, the schedule's one run queues a pending
    translation, a chunk and the judge's pair (a call's worth of one scope per task)."""
    settings.ANTHROPIC_API_KEY = ""
    memory = write(tenancy.owner, GERMAN, tenancy.team)
    assert memory.translation_status == TranslationStatus.PENDING
    make_due(memory)  # its write's claim ran out: its task never ran (no worker here)
    assert ingest(api(tenancy.writer), claude_code_chunk()).status_code == 202
    first = write(tenancy.owner, "The staging database is reset every Monday.", tenancy.team)
    for text in ("Service A deploys on Fridays.", "Service B deploys on Fridays."):
        Conflict.objects.create(
            scope=tenancy.team,
            memory_a=first,
            memory_b=write(tenancy.owner, text, tenancy.team),
            status=ConflictStatus.PENDING,
        )
    [schedule] = Schedule.objects.filter(name="sweep-jobs")
    module, name = schedule.func.rsplit(".", 1)
    sweep = getattr(importlib.import_module(module), name)
    OrmQ.objects.all().delete()
    assert sweep() == 0

    settings.ANTHROPIC_API_KEY = "test-key"
    swept = sweep()
    queued = {}
    for row in OrmQ.objects.all():
        queued.setdefault(row.task["func"], []).append(row.task["args"])
    assert swept == 4, queued
    jobs = by_name()
    assert queued[jobs["translation"].task] == [(memory.pk, claim_of(memory))]
    [[chunk_args]] = [queued[jobs["extraction"].task]]
    assert chunk_args[0] == Chunk.objects.get().pk
    [(pairs,)] = queued[jobs["judging"].many_task]
    assert sorted(row_id for row_id, _ in pairs) == sorted(
        Conflict.objects.values_list("pk", flat=True)
    )
    assert sweep() == 0  # claimed: nothing is due twice


def claim_of(memory) -> str:  # noqa: N802 - reads the claim the sweeper gave
    memory.refresh_from_db()
    return memory.translation_claim
