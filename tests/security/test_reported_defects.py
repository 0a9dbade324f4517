"""The defects found from outside (issue 10), each reproduced through the public surface."""

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from memories.models import Memory
from scopes.models import ApiToken
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured


@pytest.fixture
def personal(tenancy):
    return tenancy.owner.owned_scopes.get(kind="personal")


def remember(client, content, **extra):
    return client.post(
        "/api/v1/memories", {"content": content, "kind": "fact", **extra}, format="json"
    )


# H1: the activity log of a token restricted to scopes shows only rows of those scopes.


def test_restricted_token_sees_no_activity_of_other_scopes(tenancy, api, personal):
    full = api(tenancy.owner)
    team = tenancy.team.public_id
    remember(full, "The CTO hire is in salary band E7.", scope=team)
    secret_query = "what is the salary band for the CTO hire"
    assert (
        full.post(
            "/api/v1/recall", {"query": secret_query, "scopes": [team]}, format="json"
        ).status_code
        == 200
    )
    full.post("/api/v1/recall", {"query": "anything at all"}, format="json")
    full.post("/api/v1/context", {"topic": "hiring", "scopes": [team]}, format="json")
    full.get(f"/api/v1/briefing?scopes={team}")
    restricted = api(tenancy.owner, scopes=[personal])
    restricted.post("/api/v1/recall", {"query": "my own notes"}, format="json")
    rows = restricted.get("/api/v1/activity").json()["results"]
    assert [row["query"] for row in rows] == ["my own notes"]
    assert all(team not in row["scopes"] for row in rows)
    # The full token still sees everything the user did.
    queries = [row["query"] for row in full.get("/api/v1/activity").json()["results"]]
    assert secret_query in queries and "my own notes" in queries


# H2: an idempotency replay never answers with a memory the caller cannot read.


def test_replay_to_a_token_that_cannot_read_the_memory_is_a_new_write(tenancy, api, personal):
    full = api(tenancy.owner)
    first = remember(
        full,
        "Deploys go out on Tuesdays.",
        scope=tenancy.team.public_id,
        idempotency_key="deploy-note-1",
    )
    assert first.status_code == 201
    restricted = api(tenancy.owner, scopes=[personal])
    again = remember(restricted, "anything", idempotency_key="deploy-note-1")
    assert again.status_code == 201, again.json()
    body = again.json()
    assert body["id"] != first.json()["id"]
    assert (body["scope"], body["content"]) == (personal.public_id, "anything")
    assert restricted.get(f"/api/v1/memories/{body['id']}").status_code == 200
    assert Memory.objects.filter(content="anything", scope=personal).count() == 1


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


def test_same_key_with_another_request_is_a_conflict(tenancy, api):
    full = api(tenancy.owner)
    assert remember(full, "Cache TTL is 300 seconds.", idempotency_key="k").status_code == 201
    other = remember(full, "Cache TTL is 600 seconds.", idempotency_key="k")
    assert other.status_code == 409
    assert other.json()["error"]["details"] == {
        "idempotency_key": [other.json()["error"]["message"]]
    }
    assert remember(full, "Cache TTL is 300 seconds.", idempotency_key="k").status_code == 201


# H3: a removed member gets no lasting read channel through an old key.


def test_removed_member_cannot_read_through_a_replay(tenancy, api):
    writer = api(tenancy.writer)
    team = tenancy.team.public_id
    first = remember(
        writer, "CI runs on the self-hosted runners.", scope=team, idempotency_key="ci-1"
    ).json()
    owner = api(tenancy.owner)
    assert (
        owner.patch(
            f"/api/v1/memories/{first['id']}",
            {"content": "CI runs on the hosted runners since March."},
            format="json",
        ).status_code
        == 200
    )
    assert owner.delete(f"/api/v1/scopes/{team}/members/writer").status_code == 204
    again = remember(writer, "x", idempotency_key="ci-1")
    assert again.status_code == 201, again.json()
    body = again.json()
    assert body["id"] != first["id"] and body["content"] == "x"
    assert "hosted runners" not in again.content.decode()
    # The same request once more replays the new answer, not the team memory.
    assert remember(writer, "x", idempotency_key="ci-1").json()["id"] == body["id"]


# H4: a token restricted to scopes cannot manage the account.


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/v1/tokens", None),
        ("get", "/api/v1/tokens/{token}", None),
        ("delete", "/api/v1/tokens/{token}", None),
        ("post", "/api/v1/tokens", {"name": "more"}),
        ("post", "/api/v1/scopes", {"name": "New", "slug": "new", "kind": "team"}),
    ],
)
def test_restricted_token_cannot_manage_tokens_or_create_scopes(
    tenancy, api, personal, method, path, body
):
    full_secret = make_token(tenancy.owner, name="full")
    full = ApiToken.objects.get(name="full")
    restricted = api(tenancy.owner, scopes=[personal])
    url = path.format(token=full.public_id)
    response = (
        getattr(restricted, method)(url, body, format="json")
        if body
        else getattr(restricted, method)(url)
    )
    assert response.status_code == 403, response.content
    assert response.json()["error"]["code"] == "forbidden"
    full.refresh_from_db()
    assert full.revoked_at is None
    still = APIClient()
    still.credentials(HTTP_AUTHORIZATION=f"Bearer {full_secret}")
    assert still.get("/api/v1/me").status_code == 200


def test_restricted_token_cannot_change_members_even_in_its_scope(tenancy, api):
    restricted = api(tenancy.owner, scopes=[tenancy.team])
    team = tenancy.team.public_id
    assert restricted.get(f"/api/v1/scopes/{team}").status_code == 200
    for method, path, body in [
        ("post", f"/api/v1/scopes/{team}/members", {"username": "outsider", "role": "reader"}),
        ("patch", f"/api/v1/scopes/{team}/members/reader", {"role": "writer"}),
        ("delete", f"/api/v1/scopes/{team}/members/reader", None),
        ("patch", f"/api/v1/scopes/{team}", {"name": "Renamed"}),
        ("delete", f"/api/v1/scopes/{team}", None),
        ("get", f"/api/v1/scopes/{team}/members", None),
    ]:
        call = getattr(restricted, method)
        response = call(path, body, format="json") if body else call(path)
        assert response.status_code == 403, (method, path, response.content)
    # It still writes memories there.
    assert remember(restricted, "The team standup is at 9:30.", scope=team).status_code == 201


# M1: deep nesting answers 400 naming the body.


@pytest.mark.parametrize("path", ["/api/v1/memories", "/api/v1/memories/batch", "/api/v1/recall"])
def test_deeply_nested_json_is_a_400(tenancy, api, path):
    client = api(tenancy.owner)
    deep = b"[" * 100_000 + b"]" * 100_000
    response = client.generic("POST", path, deep, content_type="application/json")
    assert response.status_code == 400
    assert "body" in response.json()["error"]["details"]
    nested_item = b'{"items": [' + b"[" * 5000 + b"]" * 5000 + b"]}"
    response = client.generic(
        "POST", "/api/v1/memories/batch", nested_item, content_type="application/json"
    )
    assert response.status_code == 400
    assert "body" in response.json()["error"]["details"]


# M2: a NUL byte in a URL id answers 404, never a 500.


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/memories/%00"),
        ("get", "/api/v1/scopes/%00"),
        ("get", "/api/v1/tokens/%00"),
        ("delete", "/api/v1/scopes/{team}/members/%00"),
        ("post", "/api/v1/memories/%00/forget"),
    ],
)
def test_nul_in_api_path_is_a_404(tenancy, api, method, path):
    response = getattr(api(tenancy.owner), method)(path.format(team=tenancy.team.public_id))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/memories/%00/"),
        ("get", "/scopes/%00/"),
        ("post", "/scopes/{team}/members/%00/role/"),
        ("post", "/tokens/%00/revoke/"),
    ],
)
def test_nul_in_dashboard_path_is_a_404(tenancy, client, method, path):
    client.force_login(tenancy.owner)
    response = getattr(client, method)(path.format(team=tenancy.team.public_id))
    assert response.status_code == 404


# M3: MCP validates like REST.


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


def test_verbatim_nul_through_rest_names_verbatim(tenancy, api):
    response = remember(api(tenancy.owner), "A fact.", verbatim="v\x00")
    assert response.status_code == 400
    assert "verbatim" in response.json()["error"]["details"]


# L1: login throttling.


@override_settings(AXES_FAILURE_LIMIT=5)
def test_login_locks_out_after_repeated_failures(tenancy, client):
    for _ in range(5):
        client.post("/login/", {"username": "owner", "password": "wrong"})
    locked = client.post("/login/", {"username": "owner", "password": "correct horse battery"})
    assert locked.status_code == 429
    assert "locked" in locked.content.decode().lower()
    assert "_auth_user_id" not in client.session
