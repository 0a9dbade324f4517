"""Fixtures of the memories tests: the owner's API client, a web process for the MCP tests, and
the team scope with a small project in it (the recall and build_context tests)."""

from __future__ import annotations

import pytest

from tests.memories.recall_support import age, remember_all
from tests.served import start_uvicorn, stop_process_group


@pytest.fixture
def owner(tenancy, api):
    return api(tenancy.owner)


@pytest.fixture(scope="session")
def web_url(django_db_setup, django_db_blocker):
    """The URL of a web process (uvicorn) on the test database, started once for the MCP tests
    of every module that asks (each test's data is committed, then flushed)."""
    with django_db_blocker.unblock():
        proc, base = start_uvicorn()
    yield base
    output = stop_process_group(proc)
    assert "Traceback" not in output, output


@pytest.fixture
def team(tenancy):
    return tenancy.team.public_id


@pytest.fixture
def project(tenancy, team):
    """A team scope with decisions, conventions, tasks, questions and facts of various ages."""
    memories = remember_all(
        tenancy.owner,
        [
            ("We use PostgreSQL advisory locks to serialise the billing run.", "decision"),
            ("Billing exports are written as Parquet to the archive bucket.", "convention"),
            ("The billing run starts at 01:00 UTC and takes about forty minutes.", "fact"),
            ("Migrate the invoice PDFs to the new renderer.", "task"),
            ("Should refunds reopen the billing period?", "open_question"),
            ("Frontend components are named in PascalCase.", "convention"),
            ("We picked Tailwind for the dashboard styles.", "decision"),
            ("Rename the legacy cron jobs.", "task"),
        ],
        scope=team,
    )
    by_text = {m.content.split()[0] + str(i): m for i, m in enumerate(memories)}
    age(memories[6], 40)  # an old decision: not recent
    age(memories[7], 20)  # the oldest open loop
    age(memories[3], 5)
    return by_text, memories
