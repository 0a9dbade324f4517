"""REST: what each kind of token may do, idempotency replays, bodies and paths, and where a write's
authority comes from."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from memories.models import Memory
from scopes.models import ApiToken
from tests.factories import make_token


@pytest.fixture
def personal(tenancy):
    return tenancy.owner.owned_scopes.get(kind="personal")


def remember(client, content, **extra):
    return client.post(
        "/api/v1/memories", {"content": content, "kind": "fact", **extra}, format="json"
    )


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


def test_same_key_with_another_request_is_a_conflict(tenancy, api):
    full = api(tenancy.owner)
    assert remember(full, "Cache TTL is 300 seconds.", idempotency_key="k").status_code == 201
    other = remember(full, "Cache TTL is 600 seconds.", idempotency_key="k")
    assert other.status_code == 409
    assert other.json()["error"]["details"] == {
        "idempotency_key": [other.json()["error"]["message"]]
    }
    assert remember(full, "Cache TTL is 300 seconds.", idempotency_key="k").status_code == 201


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


def test_verbatim_nul_through_rest_names_verbatim(tenancy, api):
    response = remember(api(tenancy.owner), "A fact.", verbatim="v\x00")
    assert response.status_code == 400
    assert "verbatim" in response.json()["error"]["details"]


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


def _remember(client, **extra):
    body = {"content": "Lint runs on every push.", "kind": "convention", **extra}
    return client.post("/api/v1/memories", body, format="json")


def test_a_token_cannot_claim_a_persons_authority(tenancy, api, kinds_seeded):
    token = api(tenancy.writer)
    refused = _remember(token, author_kind="human")
    assert refused.status_code == 400
    assert "author_kind" in refused.json()["error"]["details"]
    assert not Memory.objects.exists()
    # Without the field a token writes as an agent; it may ask for less (capture), never more.
    assert _remember(token).json()["id"]
    assert Memory.objects.get().author_kind == "agent"
    lower = _remember(token, content="Deploys wait for green CI.", author_kind="capture")
    assert lower.status_code == 201
    assert Memory.objects.get(public_id=lower.json()["id"]).author_kind == "capture"


def test_a_session_writes_as_a_person(tenancy, client, kinds_seeded):
    client.force_login(tenancy.writer)
    response = client.post(
        "/api/v1/memories",
        {"content": "Lint runs on every push.", "kind": "convention"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert Memory.objects.get().author_kind == "human"
