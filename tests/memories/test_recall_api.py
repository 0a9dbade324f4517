"""POST /api/v1/recall: the answer, bad input by field, scopes and tokens."""

from __future__ import annotations

import pytest

from tests.memories.recall_support import remember_all
from zeromemory.core.actor import Actor


def post_recall(client, body):
    return client.post("/api/v1/recall", body, format="json")


def test_rest_recall(tenancy, api, team):
    remember_all(tenancy.owner, [("Logs go to stderr in JSON.", "convention")], scope=team)
    response = post_recall(api(tenancy.owner), {"query": "where do logs go", "k": 5})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["query"] == "where do logs go"
    [hit] = body["results"]
    assert hit["kind"] == "convention" and hit["scope"] == team and hit["similarity"] > 0.3


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({}, "query"),
        ({"query": 7}, "query"),
        ({"query": "ok", "k": 0}, "k"),
        ({"query": "ok", "k": 51}, "k"),
        ({"query": "ok", "k": "10"}, "k"),
        ({"query": "ok", "kinds": ["rumour"]}, "kinds"),
        ({"query": "ok", "kinds": "fact"}, "kinds"),
        ({"query": "ok", "scopes": "scp_x"}, "scopes"),
        ({"query": "ok", "mode": "vector"}, "mode"),
    ],
)
def test_rest_bad_input_names_the_field(tenancy, api, body, field):
    response = post_recall(api(tenancy.owner), body)
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["details"]


def test_rest_outsider_gets_404_for_a_foreign_scope(tenancy, api, team):
    remember_all(tenancy.owner, [("Secret roadmap: launch in May.", "decision")], scope=team)
    client = api(tenancy.outsider)
    for scopes in ([team], ["scp_doesnotexist"]):
        response = post_recall(client, {"query": "roadmap launch", "scopes": scopes})
        assert response.status_code == 404
        assert "scopes" in response.json()["error"]["details"]
    assert post_recall(client, {"query": "roadmap launch"}).json()["results"] == []


def test_rest_reader_and_read_only_token_can_recall(tenancy, api, team):
    [memory] = remember_all(
        tenancy.owner, [("Releases are cut on Tuesdays.", "convention")], scope=team
    )
    for client in (api(tenancy.reader), api(tenancy.owner, read_only=True)):
        response = post_recall(client, {"query": "release day", "scopes": [team]})
        assert response.status_code == 200
        assert [hit["id"] for hit in response.json()["results"]] == [memory.public_id]


def test_rest_scope_restricted_token_sees_only_its_scopes(tenancy, api, team):
    remember_all(tenancy.owner, [("Team: releases on Tuesdays.", "convention")], scope=team)
    remember_all(tenancy.owner, [("Personal: releases bore me.", "preference")])
    client = api(tenancy.owner, scopes=[tenancy.team])
    hits = post_recall(client, {"query": "releases"}).json()["results"]
    assert {hit["scope"] for hit in hits} == {team}


def test_rest_revoked_token_gets_401(tenancy):
    from rest_framework.test import APIClient

    from scopes.services import token_create, token_revoke

    created = token_create(actor=Actor(user=tenancy.owner), name="t")
    token_revoke(actor=Actor(user=tenancy.owner), token=created.token)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    response = post_recall(client, {"query": "anything"})
    assert response.status_code == 401


def test_rest_token_revoked_or_user_deactivated_after_use_is_refused_at_once(tenancy, team):
    """The token and its user are read on every call (one statement written once, no cache):
    a token that answered a moment ago answers 401 once revoked, or once its user is
    deactivated."""
    from rest_framework.test import APIClient

    from scopes.services import token_create, token_revoke

    remember_all(tenancy.owner, [("Releases are cut on Tuesdays.", "convention")], scope=team)
    clients = {}
    for name in ("revoked", "deactivated"):
        user = tenancy.owner if name == "revoked" else tenancy.reader
        created = token_create(actor=Actor(user=user), name=name)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
        response = post_recall(client, {"query": "release day", "scopes": [team]})
        assert response.status_code == 200, response.json()
        assert response.json()["results"]
        clients[name] = (client, created.token)
    client, token = clients["revoked"]
    token_revoke(actor=Actor(user=tenancy.owner), token=token)
    assert post_recall(client, {"query": "release day"}).status_code == 401
    client, _ = clients["deactivated"]
    tenancy.reader.is_active = False
    tenancy.reader.save(update_fields=["is_active"])
    assert post_recall(client, {"query": "release day"}).status_code == 401


def test_rest_removed_member_loses_the_scope_at_once(tenancy, api, team):
    from scopes.services import membership_remove

    remember_all(tenancy.owner, [("Releases are cut on Tuesdays.", "convention")], scope=team)
    client = api(tenancy.reader)
    assert post_recall(client, {"query": "release day", "scopes": [team]}).json()["results"]
    assert post_recall(client, {"query": "release day"}).json()["results"]
    membership_remove(scope=tenancy.team, username="reader")
    response = post_recall(client, {"query": "release day", "scopes": [team]})
    assert response.status_code == 404
    assert "scopes" in response.json()["error"]["details"]
    assert post_recall(client, {"query": "release day"}).json()["results"] == []


def test_rest_scope_restricted_token_naming_another_readable_scope_gets_404(tenancy, api, team):
    from scopes.models import Scope

    remember_all(tenancy.owner, [("Team: releases on Tuesdays.", "convention")], scope=team)
    remember_all(tenancy.owner, [("Personal: releases bore me.", "preference")])
    personal = Scope.objects.get(memberships__user=tenancy.owner, kind="personal").public_id
    client = api(tenancy.owner, scopes=[tenancy.team])
    response = post_recall(client, {"query": "releases", "scopes": [personal]})
    assert response.status_code == 404
    both = post_recall(client, {"query": "releases", "scopes": [team, personal]})
    assert both.status_code == 404
    hits = post_recall(client, {"query": "releases", "scopes": [team]}).json()["results"]
    assert {hit["scope"] for hit in hits} == {team}
    # The owner's own full token reads both.
    full = post_recall(api(tenancy.owner), {"query": "releases", "scopes": [team, personal]})
    assert {hit["scope"] for hit in full.json()["results"]} == {team, personal}
