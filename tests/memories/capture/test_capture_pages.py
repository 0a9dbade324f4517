"""Capture as people meet it: the admin's chunk list and retry, the Ingest page, activity rows."""

from __future__ import annotations

from memories.models import ChunkStatus
from tests.fakes.anthropic_api import (
    memories_answer,
    status,
)
from tests.memories.capture.support import DECISION, ingest


def test_the_admin_lists_chunks_and_retries_failed_ones(
    tenancy, fake_anthropic, extract, client, django_capture_on_commit_callbacks
):
    fake_anthropic.script(status(403), memories_answer([DECISION]))
    chunk = extract()
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.FAILED
    staff = type(tenancy.owner).objects.create_user(
        "staff", password="x", is_staff=True, is_superuser=True
    )
    client.force_login(staff)
    page = client.get("/admin/memories/chunk/?status=failed")
    assert page.status_code == 200 and chunk.public_id in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            "/admin/memories/chunk/",
            {"action": "retry_extraction", "_selected_action": [chunk.pk]},
        )
    assert answer.status_code == 302
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.EXTRACTED and chunk.kept == 1


def test_ingest_writes_an_activity_row(tenancy, writer, settings):
    settings.ANTHROPIC_API_KEY = ""
    chunk = ingest(writer, "user: we keep the changelog in CHANGELOG.md.").json()["chunk"]
    rows = writer.get("/api/v1/activity?operation=ingest").json()["results"]
    assert [row["results"] for row in rows] == [[{"id": chunk["id"], "duplicate": False}]]


def test_the_ingest_page_shows_chunks_and_their_memories_in_the_users_language(
    tenancy, fake_anthropic, extract, client
):
    fake_anthropic.script(memories_answer([DECISION]))
    chunk = extract()
    chunk.refresh_from_db()
    client.force_login(tenancy.writer)
    page = client.get("/ingest/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert chunk.public_id in page and chunk.memory_ids[0] in page
    assert "Extrahiert" in page and "Transkript" in page
    memory_page = client.get(f"/memories/{chunk.memory_ids[0]}/").content.decode()
    assert f"#{chunk.public_id}" in memory_page
    detail = client.get(f"/api/v1/memories/{chunk.memory_ids[0]}")
    assert detail.json()["provenance"][0]["chunk"] == chunk.public_id
