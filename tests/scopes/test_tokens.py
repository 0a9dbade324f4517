"""API tokens: shown once, stored hashed, prefix visible, last use, expiry, revocation."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework.test import APIClient

from scopes.models import ApiToken


def bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_secret_is_shown_once_and_stored_hashed(tenancy, api):
    client = api(tenancy.owner)
    created = client.post("/api/v1/tokens", {"name": "laptop"}, format="json")
    assert created.status_code == 201
    body = created.json()
    secret = body["token"]
    assert secret.startswith(body["prefix"] + "_") and body["prefix"].startswith("zm_")
    stored = ApiToken.objects.get(public_id=body["id"])
    assert secret not in (stored.secret_hash, stored.prefix)
    listed = client.get("/api/v1/tokens").json()["results"]
    assert all("token" not in row for row in listed)
    assert secret not in str(client.get(f"/api/v1/tokens/{body['id']}").json())
    assert bearer(secret).get("/api/v1/me").json()["token"]["id"] == body["id"]


def test_last_used_is_recorded(tenancy, api):
    secret = api(tenancy.owner).post("/api/v1/tokens", {"name": "x"}, format="json").json()
    assert ApiToken.objects.get(public_id=secret["id"]).last_used_at is None
    bearer(secret["token"]).get("/api/v1/me")
    assert ApiToken.objects.get(public_id=secret["id"]).last_used_at is not None


def test_revocation_is_immediate(tenancy, api):
    created = api(tenancy.owner).post("/api/v1/tokens", {"name": "x"}, format="json").json()
    client = bearer(created["token"])
    assert client.get("/api/v1/me").status_code == 200
    revoked = api(tenancy.owner).delete(f"/api/v1/tokens/{created['id']}")
    assert revoked.status_code == 200 and revoked.json()["active"] is False
    assert client.get("/api/v1/me").status_code == 401


def test_token_can_revoke_itself(tenancy, api):
    created = api(tenancy.owner).post("/api/v1/tokens", {"name": "x"}, format="json").json()
    client = bearer(created["token"])
    assert client.delete(f"/api/v1/tokens/{created['id']}").status_code == 200
    assert client.get("/api/v1/me").status_code == 401


def test_expiry(tenancy, api):
    soon = (timezone.now() + timedelta(hours=1)).isoformat()
    created = api(tenancy.owner).post(
        "/api/v1/tokens", {"name": "x", "expires_at": soon}, format="json"
    )
    assert created.status_code == 201
    ApiToken.objects.filter(public_id=created.json()["id"]).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    assert bearer(created.json()["token"]).get("/api/v1/me").status_code == 401
    past = (timezone.now() - timedelta(hours=1)).isoformat()
    refused = api(tenancy.owner).post(
        "/api/v1/tokens", {"name": "x", "expires_at": past}, format="json"
    )
    assert refused.status_code == 400
    assert "expires_at" in refused.json()["error"]["details"]


def test_scope_restriction_must_name_readable_scopes(tenancy, api):
    client = api(tenancy.outsider)
    refused = client.post(
        "/api/v1/tokens", {"name": "x", "scopes": [tenancy.team.public_id]}, format="json"
    )
    assert refused.status_code == 404
    allowed = api(tenancy.reader).post(
        "/api/v1/tokens",
        {"name": "x", "scopes": [tenancy.team.public_id], "read_only": True},
        format="json",
    )
    assert allowed.status_code == 201
    assert allowed.json()["scopes"] == [tenancy.team.public_id]


def test_restricted_token_cannot_mint_broader_tokens(tenancy, api):
    personal = tenancy.owner.owned_scopes.get(kind="personal")
    client = api(tenancy.owner, scopes=[personal])
    assert client.post("/api/v1/tokens", {"name": "x"}, format="json").status_code == 403


def test_disabled_user_token_stops_working(tenancy, api):
    client = api(tenancy.writer)
    tenancy.writer.is_active = False
    tenancy.writer.save()
    assert client.get("/api/v1/me").status_code == 401
