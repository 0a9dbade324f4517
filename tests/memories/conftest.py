"""Fixtures of the memories tests: the owner's API client and a live server for the MCP tests."""

from __future__ import annotations

import pytest

from tests.memories.mcp_support import start_uvicorn, stop


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
