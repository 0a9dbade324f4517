"""Fixtures of the memories tests: django-q2 run inline, and the owner's API client."""

from __future__ import annotations

import pytest
from django_q.conf import Conf

from tests.memories.mcp_support import start_uvicorn, stop


@pytest.fixture
def sync_tasks(monkeypatch):
    """Queued django-q2 tasks run inline, in the calling thread."""
    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.fixture
def owner(tenancy, api):
    return api(tenancy.owner)


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    """A live server for the whole module (each test's data is committed, then flushed)."""
    with django_db_blocker.unblock():
        proc, base = start_uvicorn()
    yield base
    output = stop(proc)
    assert "Traceback" not in output, output
