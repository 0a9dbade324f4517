"""Reading, listing, editing, forgetting, superseding and restoring memories through REST,
and the tenancy rules of every memory endpoint."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from memories.models import Memory, MemoryVersion
from scopes.services import token_create, token_revoke
from zeromemory.core.actor import Actor


def remember(client, content, kind="fact", **extra):
    response = client.post(
        "/api/v1/memories", {"content": content, "kind": kind, **extra}, format="json"
    )
    assert response.status_code == 201, response.json()
    return response.json()["id"]


@pytest.fixture
def team_memory(tenancy, api):
    return remember(
        api(tenancy.owner), "Releases are cut on Tuesdays.", scope=tenancy.team.public_id
    )


# (method, path suffix, body) for every endpoint about one memory.
MEMORY_ENDPOINTS = [
    ("get", "", None),
    ("patch", "", {"content": "Releases are cut on Wednesdays."}),
    ("post", "/forget", {"reason": "outdated"}),
    ("post", "/restore", None),
    ("post", "/supersede", {"by": "{other}"}),
]
WRITES = [e for e in MEMORY_ENDPOINTS if e[0] != "get"]


def call(client, method, memory_id, suffix, body, other=""):
    url = f"/api/v1/memories/{memory_id}{suffix}"
    if body is not None:
        body = {k: v.format(other=other) for k, v in body.items()}
        return getattr(client, method)(url, body, format="json")
    return getattr(client, method)(url)


@pytest.mark.parametrize(("method", "suffix", "body"), MEMORY_ENDPOINTS)
def test_outsider_gets_404_like_a_missing_memory(tenancy, api, team_memory, method, suffix, body):
    client = api(tenancy.outsider)
    foreign = call(client, method, team_memory, suffix, body, other=team_memory)
    missing = call(client, method, "mem_nope", suffix, body, other=team_memory)
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json()["error"]["code"] == "not_found"
    assert Memory.objects.get(public_id=team_memory).content == "Releases are cut on Tuesdays."


@pytest.mark.parametrize(("method", "suffix", "body"), WRITES)
def test_reader_and_read_only_token_cannot_change(tenancy, api, team_memory, method, suffix, body):
    other = remember(api(tenancy.owner), "Hotfixes skip the train.", scope=tenancy.team.public_id)
    for client in (api(tenancy.reader), api(tenancy.owner, read_only=True)):
        response = call(client, method, team_memory, suffix, body, other=other)
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "forbidden"
    memory = Memory.objects.get(public_id=team_memory)
    assert memory.valid and memory.content == "Releases are cut on Tuesdays."


@pytest.mark.parametrize(("method", "suffix", "body"), MEMORY_ENDPOINTS)
def test_revoked_and_expired_tokens_get_401(tenancy, team_memory, method, suffix, body):
    for state in ("revoked", "expired"):
        issued = token_create(actor=Actor(user=tenancy.owner), name=state)
        if state == "revoked":
            token_revoke(actor=Actor(user=tenancy.owner), token=issued.token)
        else:
            issued.token.expires_at = timezone.now() - timedelta(seconds=1)
            issued.token.save()
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
        assert call(client, method, team_memory, suffix, body).status_code == 401


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/api/v1/memories"), ("post", "/api/v1/memories"), ("post", "/api/v1/memories/batch")],
)
def test_collection_endpoints_need_credentials(db, method, path):
    response = getattr(APIClient(), method)(path, {}, format="json")
    assert response.status_code == 401


def test_reader_can_read_but_outsider_lists_nothing(tenancy, api, team_memory):
    assert api(tenancy.reader).get(f"/api/v1/memories/{team_memory}").status_code == 200
    listed = api(tenancy.outsider).get("/api/v1/memories").json()
    assert listed == {"results": [], "next_cursor": None}
    scoped = api(tenancy.outsider).get(f"/api/v1/memories?scope={tenancy.team.public_id}")
    assert scoped.status_code == 404


def test_edit_keeps_the_earlier_text_as_a_version(tenancy, api, team_memory):
    client = api(tenancy.writer)
    edited = client.patch(
        f"/api/v1/memories/{team_memory}",
        {"content": "Releases are cut on Wednesdays.", "kind": "decision"},
        format="json",
    )
    assert edited.status_code == 200, edited.json()
    body = edited.json()
    assert (body["content"], body["kind"]) == ("Releases are cut on Wednesdays.", "decision")
    [version] = body["versions"]
    assert (version["number"], version["content"], version["kind"]) == (
        1,
        "Releases are cut on Tuesdays.",
        "fact",
    )
    assert version["edited_by"] == "writer"
    again = client.patch(f"/api/v1/memories/{team_memory}", {"kind": "convention"}, format="json")
    assert [v["kind"] for v in again.json()["versions"]] == ["fact", "decision"]
    memory = Memory.objects.get(public_id=team_memory)
    from memories.embeddings import embed_query

    expected = embed_query("Releases are cut on Wednesdays.")
    assert sum(a * b for a, b in zip(memory.embedding, expected, strict=True)) > 0.999


def test_edit_validation(tenancy, api, team_memory):
    client = api(tenancy.owner)
    url = f"/api/v1/memories/{team_memory}"
    assert "content" in client.patch(url, {}, format="json").json()["error"]["details"]
    assert client.patch(url, {"content": "  "}, format="json").status_code == 400
    assert client.patch(url, {"kind": "rumour"}, format="json").status_code == 400
    secret = client.patch(url, {"content": "key AKIAIOSFODNN7EXAMPLE"}, format="json")
    assert secret.status_code == 400
    assert MemoryVersion.objects.count() == 0


def test_edit_into_an_identical_memory_is_a_conflict(tenancy, api, team_memory):
    client = api(tenancy.owner)
    other = remember(client, "Hotfixes skip the train.", scope=tenancy.team.public_id)
    response = client.patch(
        f"/api/v1/memories/{other}", {"content": "Releases are cut on Tuesdays."}, format="json"
    )
    assert response.status_code == 409
    assert response.json()["error"]["details"]["duplicate_of"] == team_memory


def test_forget_and_restore(tenancy, api, team_memory):
    client = api(tenancy.writer)
    url = f"/api/v1/memories/{team_memory}"
    assert client.post(f"{url}/forget", {}, format="json").status_code == 400
    forgotten = client.post(f"{url}/forget", {"reason": "we moved to trunk-based"}, format="json")
    assert forgotten.status_code == 200
    body = forgotten.json()
    assert (body["state"], body["forgotten_reason"]) == ("forgotten", "we moved to trunk-based")
    assert client.post(f"{url}/forget", {"reason": "again"}, format="json").status_code == 409
    listed = [m["id"] for m in client.get("/api/v1/memories").json()["results"]]
    assert team_memory not in listed
    forgotten_list = client.get("/api/v1/memories?state=forgotten").json()["results"]
    assert [m["id"] for m in forgotten_list] == [team_memory]
    restored = client.post(f"{url}/restore")
    assert restored.status_code == 200 and restored.json()["state"] == "valid"
    assert restored.json()["restored_at"] is not None
    assert client.post(f"{url}/restore").status_code == 409
    assert Memory.objects.filter(public_id=team_memory).exists()


def test_restore_refuses_when_an_identical_memory_is_valid(tenancy, api, team_memory):
    client = api(tenancy.owner)
    client.post(f"/api/v1/memories/{team_memory}/forget", {"reason": "x"}, format="json")
    twin = remember(client, "Releases are cut on Tuesdays.", scope=tenancy.team.public_id)
    response = client.post(f"/api/v1/memories/{team_memory}/restore")
    assert response.status_code == 409
    assert response.json()["error"]["details"]["duplicate_of"] == twin


def test_supersede(tenancy, api, team_memory):
    client = api(tenancy.owner)
    newer = remember(client, "Releases are cut on Thursdays.", scope=tenancy.team.public_id)
    personal = remember(client, "My own note.")
    url = f"/api/v1/memories/{team_memory}/supersede"
    assert client.post(url, {"by": team_memory}, format="json").status_code == 400
    assert client.post(url, {"by": personal}, format="json").status_code == 400
    outsider_memory = remember(api(tenancy.outsider), "Outsider note.")
    assert client.post(url, {"by": outsider_memory}, format="json").status_code == 404
    response = client.post(url, {"by": newer}, format="json")
    assert response.status_code == 200
    assert (response.json()["state"], response.json()["superseded_by"]) == ("superseded", newer)
    superseded = client.get("/api/v1/memories?state=superseded").json()["results"]
    assert [m["id"] for m in superseded] == [team_memory]
    restored = client.post(f"/api/v1/memories/{team_memory}/restore").json()
    assert (restored["state"], restored["superseded_by"]) == ("valid", None)


def test_list_filters_and_cursor(tenancy, api):
    client = api(tenancy.owner)
    team = tenancy.team.public_id
    ids = [remember(client, f"Service number {i} listens on port {8000 + i}.") for i in range(5)]
    decision = remember(client, "We chose PostgreSQL over MySQL.", kind="decision", scope=team)
    page = client.get("/api/v1/memories?limit=2").json()
    assert [m["id"] for m in page["results"]] == [decision, ids[4]]
    second = client.get(f"/api/v1/memories?limit=2&cursor={page['next_cursor']}").json()
    assert [m["id"] for m in second["results"]] == [ids[3], ids[2]]
    third = client.get(f"/api/v1/memories?limit=3&cursor={second['next_cursor']}").json()
    assert [m["id"] for m in third["results"]] == [ids[1], ids[0]]
    assert third["next_cursor"] is None
    assert [m["id"] for m in client.get(f"/api/v1/memories?scope={team}").json()["results"]] == [
        decision
    ]
    kinds = client.get("/api/v1/memories?kind=decision").json()["results"]
    assert [m["id"] for m in kinds] == [decision]
    assert client.get("/api/v1/memories?kind=rumour").status_code == 400
    assert client.get("/api/v1/memories?state=gone").status_code == 400
    assert client.get("/api/v1/memories?limit=0").status_code == 400
    assert client.get("/api/v1/memories?author_kind=agent").json()["results"]
    assert not client.get("/api/v1/memories?author_kind=human").json()["results"]
    assert client.get("/api/v1/memories?translation_status=skipped").json()["results"]
    future = (timezone.now() + timedelta(days=1)).isoformat().replace("+00:00", "Z")
    assert not client.get(f"/api/v1/memories?created_after={future}").json()["results"]
    assert client.get("/api/v1/memories?created_after=yesterday").status_code == 400
    assert client.get("/api/v1/memories?colour=red").status_code == 400
