"""MCP: replays, refusals that match REST's, the review tools' filters and the ingest tool's
arguments."""

from __future__ import annotations

import pytest

from memories.models import Chunk
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured


@pytest.fixture
def personal(tenancy):
    return tenancy.owner.owned_scopes.get(kind="personal")


def test_mcp_replay_to_a_token_that_cannot_read_the_memory(tenancy, api, personal, kinds_seeded):
    team = tenancy.team.public_id
    written = call_tool(
        make_token(tenancy.owner),
        "remember",
        {
            "content": "Deploys go out on Tuesdays.",
            "kind": "fact",
            "scope": team,
            "idempotency_key": "deploy-note-1",
        },
    )
    assert not written.is_error
    restricted = make_token(tenancy.owner, scopes=[personal])
    again = structured(
        call_tool(
            restricted,
            "remember",
            {"content": "anything", "kind": "fact", "idempotency_key": "deploy-note-1"},
        )
    )
    assert again["id"] != structured(written)["id"]
    assert (again["scope"], again["content"]) == (personal.public_id, "anything")


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("remember", {"content": "x", "kind": "fact", "scope": "scp_\x00"}, "scope"),
        (
            "remember",
            {"content": "x", "kind": "fact", "conversation_id": "c\x00"},
            "conversation_id",
        ),
        ("remember", {"content": "x", "kind": "fact", "source_path": "a\x00b"}, "source_path"),
        (
            "remember",
            {"content": "x", "kind": "fact", "idempotency_key": "k\x00"},
            "idempotency_key",
        ),
        ("remember", {"content": "x", "kind": "fact", "verbatim": "v\x00"}, "verbatim"),
        ("forget", {"memory_id": "mem_\x00", "reason": "r"}, "memory_id"),
        ("forget", {"memory_id": "mem_x", "reason": "r\x00"}, "reason"),
        ("restore", {"memory_id": "\x00"}, "memory_id"),
        ("recall", {"query": "x", "colour": "red"}, "colour"),
        ("remember", {"content": "x", "kind": "fact", "extra": 1}, "extra"),
    ],
)
def test_mcp_refuses_what_rest_refuses_naming_the_field(
    tenancy, kinds_seeded, tool, arguments, field
):
    result = call_tool(make_token(tenancy.owner), tool, arguments)
    assert result.is_error
    error = structured(result)["error"]
    assert error["code"] == "validation_failed", error
    assert field in error["details"], error


def challenged(api, tenancy, content: str) -> tuple[str, str]:
    """A new team memory the owner wrote: its id and its challenge URL."""
    memory = api(tenancy.owner).post(
        "/api/v1/memories",
        {"content": content, "kind": "fact", "scope": tenancy.team.public_id},
        format="json",
    )
    memory_id = memory.json()["id"]
    return memory_id, f"/api/v1/memories/{memory_id}/challenge"


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


def test_the_mcp_ingest_tool_takes_no_client_argument(tenancy, kinds_seeded):
    secret = make_token(tenancy.writer)
    claimed = call_tool(
        secret,
        "ingest",
        {"content": "user: we deploy on Fridays only.", "client": "claude-desktop"},
    )
    assert claimed.is_error and "client" in structured(claimed)["error"]["details"]
    assert not Chunk.objects.exists()
    named = call_tool(secret, "ingest", {"content": "user: we deploy on Fridays only."})
    assert not named.is_error
    assert Chunk.objects.get().client != "claude-desktop"
