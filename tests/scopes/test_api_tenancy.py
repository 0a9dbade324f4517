"""Every scopes/tokens endpoint: outsiders get 404, readers and read-only tokens cannot write,
revoked or expired tokens get 401."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from scopes.models import ApiToken
from scopes.services import token_create, token_revoke
from zeromemory.core.actor import Actor

# (method, path, body, minimum role) for the endpoints about one scope.
SCOPE_ENDPOINTS = [
    ("get", "/api/v1/scopes/{scope}", None, "reader"),
    ("patch", "/api/v1/scopes/{scope}", {"name": "Renamed"}, "admin"),
    ("delete", "/api/v1/scopes/{scope}", None, "admin"),
    ("get", "/api/v1/scopes/{scope}/members", None, "admin"),
    ("post", "/api/v1/scopes/{scope}/members", {"username": "outsider", "role": "reader"}, "admin"),
    ("patch", "/api/v1/scopes/{scope}/members/writer", {"role": "reader"}, "admin"),
    ("delete", "/api/v1/scopes/{scope}/members/writer", None, "admin"),
]
WRITES = [e for e in SCOPE_ENDPOINTS if e[0] != "get"]
ALL_ENDPOINTS = [
    ("get", "/api/v1/me", None),
    ("get", "/api/v1/scopes", None),
    ("post", "/api/v1/scopes", {"name": "New", "slug": "new", "kind": "team"}),
    ("get", "/api/v1/tokens", None),
    ("post", "/api/v1/tokens", {"name": "ci"}),
    ("get", "/api/v1/tokens/{token}", None),
    ("delete", "/api/v1/tokens/{token}", None),
] + [e[:3] for e in SCOPE_ENDPOINTS]


def call(client: APIClient, method: str, path: str, body, **ids):
    url = path.format(**ids)
    if body is None:
        return getattr(client, method)(url)
    return getattr(client, method)(url, body, format="json")


def owner_token_id(tenancy) -> str:
    return token_create(actor=Actor(user=tenancy.owner), name="owned").token.public_id


@pytest.mark.parametrize(("method", "path", "body", "role"), SCOPE_ENDPOINTS)
def test_outsider_gets_404_like_a_missing_scope(tenancy, api, method, path, body, role):
    outsider = api(tenancy.outsider)
    foreign = call(outsider, method, path, body, scope=tenancy.team.public_id)
    missing = call(outsider, method, path, body, scope="scp_doesnotexist")
    assert foreign.status_code == missing.status_code == 404
    same = foreign.json()["error"]["message"].replace(tenancy.team.public_id, "scp_doesnotexist")
    assert same == missing.json()["error"]["message"]
    assert foreign.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(("method", "path", "body", "role"), SCOPE_ENDPOINTS)
def test_members_below_the_needed_role_are_forbidden(tenancy, api, method, path, body, role):
    for user, level in ((tenancy.reader, "reader"), (tenancy.writer, "writer")):
        response = call(api(user), method, path, body, scope=tenancy.team.public_id)
        allowed = role == "reader" or (role == "writer" and level == "writer")
        # Removing yourself is leaving, which any member may do.
        allowed |= method == "delete" and path.endswith(f"/members/{user.username}")
        if allowed:
            assert response.status_code < 400, response.json()
        else:
            assert response.status_code == 403, (user, path, response.content)
            assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize(("method", "path", "body", "role"), WRITES)
def test_read_only_token_cannot_write(tenancy, api, method, path, body, role):
    client = api(tenancy.owner, read_only=True)
    response = call(client, method, path, body, scope=tenancy.team.public_id)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize(("method", "path", "body", "role"), SCOPE_ENDPOINTS)
def test_admin_can_use_every_scope_endpoint(tenancy, api, method, path, body, role):
    response = call(api(tenancy.owner), method, path, body, scope=tenancy.team.public_id)
    assert response.status_code in (200, 201, 204), response.content


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/api/v1/scopes", {"name": "New", "slug": "new", "kind": "team"}),
        ("post", "/api/v1/tokens", {"name": "ci"}),
        ("delete", "/api/v1/tokens/{token}", None),
    ],
)
def test_read_only_token_cannot_create_or_revoke(tenancy, api, method, path, body):
    token_id = token_create(actor=Actor(user=tenancy.owner), name="other").token.public_id
    response = call(api(tenancy.owner, read_only=True), method, path, body, token=token_id)
    assert response.status_code == 403


@pytest.mark.parametrize("method", ["get", "delete"])
def test_outsider_gets_404_for_another_users_token(tenancy, api, method):
    token_id = owner_token_id(tenancy)
    response = call(api(tenancy.outsider), method, "/api/v1/tokens/{token}", None, token=token_id)
    missing = call(api(tenancy.outsider), method, "/api/v1/tokens/tok_missing", None)
    assert response.status_code == missing.status_code == 404
    assert ApiToken.objects.get(public_id=token_id).revoked_at is None


@pytest.mark.parametrize(("method", "path", "body"), ALL_ENDPOINTS)
@pytest.mark.parametrize("state", ["revoked", "expired", "unknown", "missing"])
def test_unusable_credentials_get_401(tenancy, method, path, body, state):
    issued = token_create(actor=Actor(user=tenancy.owner), name="dying")
    if state == "revoked":
        token_revoke(actor=Actor(user=tenancy.owner), token=issued.token)
    elif state == "expired":
        ApiToken.objects.filter(pk=issued.token.pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
    client = APIClient()
    if state == "unknown":
        client.credentials(HTTP_AUTHORIZATION="Bearer zm_deadbeef_nope")
    elif state != "missing":
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
    response = call(client, method, path, body, scope=tenancy.team.public_id, token="tok_x")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_token_restricted_to_scopes_sees_only_those(tenancy, api):
    personal = tenancy.owner.owned_scopes.get(kind="personal")
    client = api(tenancy.owner, scopes=[personal])
    listed = client.get("/api/v1/scopes").json()["results"]
    assert [s["id"] for s in listed] == [personal.public_id]
    assert client.get(f"/api/v1/scopes/{tenancy.team.public_id}").status_code == 404
    me = client.get("/api/v1/me").json()
    assert [s["id"] for s in me["scopes"]] == [personal.public_id]
