"""Defects found by a second look from outside at capture and hygiene, each reproduced through
the public surface: the ingest ledger bound to the scope written to, challenges that neither
race nor show what others wrote, an import into a second scope, list_conflicts' verdict."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memories.models import Chunk
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured

TEXT = "user: we never call Stripe inside a request handler, webhooks go through the queue."
DIGEST = hashlib.sha256(TEXT.encode()).hexdigest()


@pytest.fixture
def personal(tenancy):
    return tenancy.owner.owned_scopes.get(kind="personal")


def ingest(client, **body):
    return client.post(
        "/api/v1/ingest",
        {"source_kind": "transcript", "client": "claude-code", **body},
        format="json",
    )


# The ingest ledger: a token restricted to the personal scope learns nothing of a team chunk.


def test_the_ledger_answers_only_about_the_scope_asked(tenancy, api, personal):
    team = tenancy.team.public_id
    stored = ingest(api(tenancy.owner), content=TEXT, scope=team)
    assert stored.status_code == 202, stored.json()
    team_chunk = stored.json()["chunk"]["id"]
    restricted = api(tenancy.owner, scopes=[personal])
    probe = ingest(restricted, chunk_hash=DIGEST, probe=True)
    assert probe.status_code == 200 and probe.json() == {"chunk": None}
    token = make_token(tenancy.owner, scopes=[personal])
    answer = structured(
        call_tool(
            token,
            "ingest",
            {"content": TEXT, "source_kind": "transcript", "chunk_hash": DIGEST, "probe": True},
        )
    )
    assert answer["chunk"] is None
    # The same text into the personal scope is stored there, not answered with the team chunk.
    mine = ingest(restricted, content=TEXT)
    assert mine.status_code == 202 and mine.json()["chunk"]["id"] != team_chunk
    again = ingest(api(tenancy.owner), content=TEXT, scope=team)
    assert again.status_code == 200
    assert (again.json()["chunk"]["id"], again.json()["chunk"]["duplicate"]) == (team_chunk, True)
    assert Chunk.objects.filter(chunk_hash=DIGEST).count() == 2


def test_a_removed_member_gets_no_answer_about_the_team_chunk(tenancy, api):
    writer = api(tenancy.writer)
    team = tenancy.team.public_id
    team_chunk = ingest(writer, content=TEXT, scope=team).json()["chunk"]["id"]
    assert api(tenancy.owner).delete(f"/api/v1/scopes/{team}/members/writer").status_code == 204
    assert ingest(writer, chunk_hash=DIGEST, probe=True).json() == {"chunk": None}
    own = ingest(writer, content=TEXT)
    assert own.status_code == 202 and own.json()["chunk"]["id"] != team_chunk
    assert team_chunk not in own.content.decode()


# Challenges: one open item per memory, and a challenger sees only their own words.


def challenged(api, tenancy, content: str) -> tuple[str, str]:
    """A new team memory the owner wrote: its id and its challenge URL."""
    memory = api(tenancy.owner).post(
        "/api/v1/memories",
        {"content": content, "kind": "fact", "scope": tenancy.team.public_id},
        format="json",
    )
    memory_id = memory.json()["id"]
    return memory_id, f"/api/v1/memories/{memory_id}/challenge"


def test_a_second_challenger_sees_neither_the_first_reason_nor_who_wrote_it(
    tenancy, api, kinds_seeded
):
    memory_id, url = challenged(api, tenancy, "Staging is reset every Monday.")
    first = api(tenancy.owner).post(url, {"reason": "The CFO moved it to Sundays."}, format="json")
    assert first.status_code == 201 and first.json()["new"] is True
    second = api(tenancy.writer).post(url, {"reason": "It runs on Sundays now."}, format="json")
    assert second.status_code == 200, second.json()
    body = second.json()
    assert (body["id"], body["new"], body["reason"]) == (
        first.json()["id"],
        False,
        "It runs on Sundays now.",
    )
    assert "CFO" not in second.content.decode() and "owner" not in second.content.decode()
    tool = structured(
        call_tool(
            make_token(tenancy.writer),
            "challenge",
            {"memory_id": memory_id, "reason": "Sundays."},
        )
    )
    assert tool["new"] is False and "CFO" not in str(tool)
    # The admin reads every reason, each one once.
    item = api(tenancy.owner).get(f"/api/v1/conflicts/{body['id']}").json()
    assert item["rationale"] == (
        "The CFO moved it to Sundays.\n\nwriter: It runs on Sundays now.\n\nwriter: Sundays."
    )
    api(tenancy.writer).post(url, {"reason": "It runs on Sundays now."}, format="json")
    assert api(tenancy.owner).get(f"/api/v1/conflicts/{body['id']}").json() == item


# Import: the same file into a second scope is written there too.


def test_the_same_file_imports_into_each_scope(tenancy, api):
    writer = api(tenancy.writer)
    body = {
        "source_tool": "claude-md",
        "source_path": "CLAUDE.md",
        "content": "# Project\n\n## Testing\n\nRun `make test` before every push.\n",
    }
    mine = writer.post("/api/v1/import", body, format="json").json()["results"]
    team = writer.post(
        "/api/v1/import", {**body, "scope": tenancy.team.public_id}, format="json"
    ).json()["results"]
    assert [r["outcome"] for r in mine] == [r["outcome"] for r in team] == ["created"]
    assert mine[0]["memory"] != team[0]["memory"]
    again = writer.post(
        "/api/v1/import", {**body, "scope": tenancy.team.public_id}, format="json"
    ).json()["results"]
    assert [(r["outcome"], r["memory"]) for r in again] == [("already_imported", team[0]["memory"])]


# list_conflicts takes the verdict filter REST takes.


def test_list_conflicts_filters_by_verdict(tenancy, api, kinds_seeded):
    _, url = challenged(api, tenancy, "Backups run at 02:00 UTC.")
    item = api(tenancy.owner).post(url, {"reason": "They run at 03:00."}, format="json").json()
    token = make_token(tenancy.owner)
    disputed = structured(call_tool(token, "list_conflicts", {"verdict": "challenge"}))
    duplicates = structured(call_tool(token, "list_conflicts", {"verdict": "duplicate"}))
    assert [row["id"] for row in disputed["results"]] == [item["id"]]
    assert duplicates["results"] == []
    refused = call_tool(token, "list_conflicts", {"verdict": "gossip"})
    assert refused.is_error and "verdict" in str(structured(refused)["error"])


# Tokens: a token never outlives the token that creates it.


def test_a_token_made_by_an_expiring_token_expires_with_it(tenancy, api):
    ends = timezone.now() + timedelta(hours=1)
    parent = api(tenancy.owner, expires_at=ends)
    child = parent.post("/api/v1/tokens", {"name": "child"}, format="json")
    assert child.status_code == 201, child.json()
    assert parse_datetime(child.json()["expires_at"]) == ends
    later = (ends + timedelta(days=30)).isoformat()
    refused = parent.post("/api/v1/tokens", {"name": "late", "expires_at": later}, format="json")
    assert refused.status_code == 400 and "expires_at" in refused.json()["error"]["details"]
    sooner = (ends - timedelta(minutes=30)).isoformat()
    assert (
        parent.post(
            "/api/v1/tokens", {"name": "sooner", "expires_at": sooner}, format="json"
        ).status_code
        == 201
    )
    # A session (or a token without an expiry) may still create a token that never expires.
    forever = api(tenancy.owner).post("/api/v1/tokens", {"name": "ci"}, format="json")
    assert forever.json()["expires_at"] is None
