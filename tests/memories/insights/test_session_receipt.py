"""The session receipt: REST and MCP answer the same line for a conversation, counted from the
calls that carried its conversation_id (every MCP tool takes one) and the watcher's chunks."""

from __future__ import annotations

import pytest

from memories.models import ActivityLog
from tests.factories import make_scope, make_token
from tests.mcp_inproc import call_tool, structured, tool_names
from tests.memories.insights.support import seed


@pytest.fixture
def seeded(tenancy, kinds_seeded):
    return seed(tenancy)


def receipt(tenancy, user, conversation_id, **token):
    response = tenancy.client(user, **token).get(
        "/api/v1/insights/session", {"conversation_id": conversation_id}
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_the_receipt_counts_the_sessions_calls_and_writes(tenancy, seeded):
    body = receipt(tenancy, tenancy.owner, "conv-2")
    # A context (old_used) and a briefing (by_agent); by_capture was captured in the session
    # and is in an open conflict.
    assert body == {
        "conversation_id": "conv-2",
        "calls": 2,
        "memories_recalled": 2,
        "memories_written": 1,
        "tokens_delivered": 35,
        "conflicts_raised": 1,
        "line": "This session: 2 memories recalled, 1 written, 35 tokens delivered, "
        "1 conflicts raised.",
    }


def test_another_users_session_is_not_counted(tenancy, seeded):
    assert receipt(tenancy, tenancy.reader, "conv-2")["calls"] == 0
    assert receipt(tenancy, tenancy.writer, "conv-1")["memories_recalled"] == 2


def test_a_token_restricted_to_another_scope_counts_nothing_of_the_team(tenancy, seeded):
    other = make_scope(owner=tenancy.owner, slug="other")
    body = receipt(tenancy, tenancy.owner, "conv-2", scopes=[other])
    assert (body["calls"], body["memories_recalled"], body["memories_written"]) == (0, 0, 0)
    assert (body["tokens_delivered"], body["conflicts_raised"]) == (0, 0)


def test_the_conversation_id_is_required(tenancy, seeded):
    response = tenancy.client(tenancy.owner).get("/api/v1/insights/session")
    assert response.status_code == 400
    assert "conversation_id" in response.json()["error"]["details"]


def test_mcp_calls_carry_the_conversation_id_and_the_tool_answers_the_receipt(tenancy, seeded):
    secret = make_token(tenancy.owner)
    assert "session_receipt" in tool_names()
    # list_scopes declares no conversation_id of its own: every tool takes it all the same.
    listed = call_tool(secret, "list_scopes", {"conversation_id": "conv-9"})
    assert not listed.is_error
    recalled = call_tool(
        secret,
        "recall",
        {"query": "deploys on tuesdays", "scopes": [tenancy.team.public_id],
         "conversation_id": "conv-9"},
    )  # fmt: skip
    assert not recalled.is_error, recalled.content
    row = ActivityLog.objects.filter(operation="recall").latest("id")
    assert row.conversation_id == "conv-9"
    answer = structured(call_tool(secret, "session_receipt", {"conversation_id": "conv-9"}))
    assert answer["calls"] == 1 and answer["conversation_id"] == "conv-9"
    # Omitted, the receipt is the one of the conversation the call itself carries.
    same = structured(call_tool(secret, "session_receipt", {"conversation_id": "conv-2"}))
    assert same["tokens_delivered"] == 35


def test_a_conversation_id_that_is_not_a_string_is_refused(tenancy, seeded):
    secret = make_token(tenancy.owner)
    result = call_tool(secret, "list_scopes", {"conversation_id": 12})
    assert result.is_error
    assert structured(result)["error"]["code"] == "validation_failed"
