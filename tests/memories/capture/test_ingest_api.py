"""POST /api/v1/ingest and GET /api/v1/ingest/{id}: stored at once, a per-user hash ledger,
secrets redacted before anything is stored, writers only."""

from __future__ import annotations

import hashlib

import pytest
from django.test import override_settings

from memories.models import Chunk
from tests.memories.capture.support import chunk_of, claude_code_chunk, ingest


def test_a_chunk_is_stored_and_answered_at_once(tenancy, writer, settings):
    settings.ANTHROPIC_API_KEY = ""
    text = claude_code_chunk()
    response = ingest(writer, text, conversation_id="s-1", source_path="/home/dev/shop")
    assert response.status_code == 202, response.json()
    chunk = response.json()["chunk"]
    assert chunk["id"].startswith("chk_") and chunk["duplicate"] is False
    assert chunk["status"] == "waiting_for_key"  # no key: it waits, nothing is lost
    stored = Chunk.objects.get(public_id=chunk["id"])
    assert stored.content == text and stored.chunk_hash == hashlib.sha256(text.encode()).hexdigest()
    assert stored.scope == tenancy.writer.owned_scopes.get(kind="personal")
    detail = writer.get(f"/api/v1/ingest/{chunk['id']}").json()
    assert (detail["status"], detail["client"], detail["conversation_id"]) == (
        "waiting_for_key",
        "claude-code",
        "s-1",
    )
    assert detail["memories"] == [] and detail["kept"] == 0 and detail["dropped"] == {}


def test_the_same_chunk_twice_is_one_chunk(tenancy, writer, settings):
    settings.ANTHROPIC_API_KEY = ""
    first = ingest(writer, "user: We pin Node 20 for the web build because of the lockfile.")
    again = ingest(writer, "user: We pin Node 20 for the web build because of the lockfile.")
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["chunk"] == {**first.json()["chunk"], "duplicate": True}
    assert Chunk.objects.count() == 1


def test_the_client_hash_is_the_ledger_key_and_a_probe_asks_it(tenancy, writer, settings):
    settings.ANTHROPIC_API_KEY = ""
    digest = "a" * 64
    probe = writer.post(
        "/api/v1/ingest",
        {"source_kind": "document", "chunk_hash": digest, "probe": True},
        format="json",
    )
    assert probe.status_code == 200 and probe.json() == {"chunk": None}
    stored = ingest(writer, "Some document text about the deploy.", chunk_hash=digest)
    assert stored.status_code == 202
    probe = writer.post(
        "/api/v1/ingest",
        {"source_kind": "document", "chunk_hash": digest, "probe": True},
        format="json",
    )
    assert probe.json()["chunk"]["id"] == stored.json()["chunk"]["id"]
    assert probe.json()["chunk"]["duplicate"] is True
    assert Chunk.objects.count() == 1


def test_the_ledger_is_per_user(tenancy, api, settings):
    settings.ANTHROPIC_API_KEY = ""
    text = "user: the staging database is reset every Monday at 06:00 UTC."
    assert ingest(api(tenancy.writer), text).status_code == 202
    assert ingest(api(tenancy.owner), text).status_code == 202
    assert Chunk.objects.count() == 2


def test_secrets_are_redacted_before_anything_is_stored(tenancy, writer, settings):
    settings.ANTHROPIC_API_KEY = ""
    secret = "ghp_" + "A1b2C3d4" * 5
    text = f"user: use the token {secret} for the CI runner, it deploys to prod."
    chunk = chunk_of(ingest(writer, text))
    assert secret not in chunk.content
    assert "[redacted: a GitHub token]" in chunk.content
    assert chunk.redactions == ["a GitHub token"]
    detail = writer.get(f"/api/v1/ingest/{chunk.public_id}").json()
    assert detail["redactions"] == ["a GitHub token"] and secret not in str(detail)


@override_settings(MAX_CHUNK_CHARS=1000)
def test_a_chunk_over_the_limit_is_refused_naming_content(tenancy, writer):
    response = ingest(writer, "x" * 1001)
    assert response.status_code == 400
    assert "content" in response.json()["error"]["details"]
    assert not Chunk.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"source_kind": "novel", "content": "x"}, "source_kind"),
        ({"source_kind": "transcript"}, "content"),
        ({"source_kind": "transcript", "content": "   "}, "content"),
        ({"source_kind": "transcript", "content": "x", "chunk_hash": "not/a/hash"}, "chunk_hash"),
        ({"source_kind": "transcript", "content": "x", "probe": "yes"}, "probe"),
        ({"source_kind": "transcript", "content": "x", "scope": "scp_missing"}, "scope"),
    ],
)
def test_bad_input_names_the_field(tenancy, writer, body, field):
    response = writer.post("/api/v1/ingest", body, format="json")
    assert response.status_code in (400, 404), response.json()
    assert field in response.json()["error"]["details"]


def test_readers_and_read_only_tokens_cannot_ingest(tenancy, api):
    team = tenancy.team.public_id
    assert ingest(api(tenancy.reader), "user: a note.", scope=team).status_code == 403
    assert ingest(api(tenancy.owner, read_only=True), "user: a note.").status_code == 403


def test_a_chunk_of_another_user_is_a_404(tenancy, api, settings):
    settings.ANTHROPIC_API_KEY = ""
    chunk = ingest(api(tenancy.writer), "user: we use trunk-based development.").json()["chunk"]
    response = api(tenancy.outsider).get(f"/api/v1/ingest/{chunk['id']}")
    missing = api(tenancy.outsider).get("/api/v1/ingest/chk_missing")
    assert response.status_code == missing.status_code == 404
