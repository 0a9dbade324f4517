"""POST /api/v1/context and GET /api/v1/briefing: the answer, bad input, scopes and tokens."""

from __future__ import annotations

import pytest

from zeromemory.core.actor import Actor


def test_rest_context_and_briefing(tenancy, api, project):
    client = api(tenancy.owner)
    response = client.post(
        "/api/v1/context", {"topic": "billing run", "max_tokens": 300}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["tokens"] <= 300 and body["markdown"].startswith("# Context")
    assert [s["name"] for s in body["sections"]] == ["relevant", "recent", "open_loops"]
    response = client.get("/api/v1/briefing", {"max_tokens": 300})
    assert response.status_code == 200 and response.json()["tokens"] <= 300
    assert client.get("/api/v1/briefing").json()["max_tokens"] == 2000


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"topic": ""}, "topic"),
        ({}, "topic"),
        ({"topic": "x", "max_tokens": 50}, "max_tokens"),
        ({"topic": "x", "max_tokens": 40_000}, "max_tokens"),
        ({"topic": "x", "max_tokens": "300"}, "max_tokens"),
        ({"topic": "x", "scopes": "scp_x"}, "scopes"),
        ({"topic": "x", "extra": 1}, "extra"),
    ],
)
def test_rest_context_bad_input(tenancy, api, body, field):
    response = api(tenancy.owner).post("/api/v1/context", body, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["details"]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"max_tokens": "99"}, "max_tokens"), ({"max_tokens": "lots"}, "max_tokens"), ({"x": 1}, "x")],
)
def test_rest_briefing_bad_input(tenancy, api, params, field):
    response = api(tenancy.owner).get("/api/v1/briefing", params)
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]


def test_rest_outsider_gets_404_for_a_foreign_scope(tenancy, api, team, project):
    client = api(tenancy.outsider)
    context = client.post("/api/v1/context", {"topic": "billing", "scopes": [team]}, format="json")
    assert context.status_code == 404 and "scopes" in context.json()["error"]["details"]
    brief = client.get("/api/v1/briefing", {"scopes": team})
    assert brief.status_code == 404 and "scopes" in brief.json()["error"]["details"]
    mine = client.post("/api/v1/context", {"topic": "billing"}, format="json").json()
    assert all(not s["rows"] for s in mine["sections"])


def test_rest_reader_and_read_only_token_get_context(tenancy, api, team, project):
    for client in (api(tenancy.reader), api(tenancy.owner, read_only=True)):
        context = client.post(
            "/api/v1/context", {"topic": "billing", "scopes": [team]}, format="json"
        )
        assert context.status_code == 200 and context.json()["sections"][0]["rows"]
        brief = client.get("/api/v1/briefing", {"scopes": team})
        assert brief.status_code == 200 and brief.json()["sections"][0]["rows"]


def test_rest_revoked_token_gets_401(tenancy):
    from rest_framework.test import APIClient

    from scopes.services import token_create, token_revoke

    created = token_create(actor=Actor(user=tenancy.owner), name="t")
    token_revoke(actor=Actor(user=tenancy.owner), token=created.token)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    assert client.post("/api/v1/context", {"topic": "x"}, format="json").status_code == 401
    assert client.get("/api/v1/briefing").status_code == 401
