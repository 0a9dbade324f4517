"""Fixtures of the capture tests: a writer's API client, and ingest with the queued extraction
run inline."""

from __future__ import annotations

import pytest

from tests.memories.capture.support import claude_code_chunk, run


@pytest.fixture
def writer(tenancy, api):
    return api(tenancy.writer)


@pytest.fixture
def extract(writer, sync_tasks, django_capture_on_commit_callbacks):
    return lambda text=None, **extra: run(
        writer, text or claude_code_chunk(), django_capture_on_commit_callbacks, **extra
    )
