"""Scope and membership rules through the REST API."""

from __future__ import annotations

from rest_framework.test import APIClient

from scopes.models import Membership, Role, Scope
from tests.factories import UserFactory


def test_every_new_user_gets_a_personal_scope_as_admin(db):
    user = UserFactory()
    personal = Scope.objects.get(owner=user, kind="personal")
    assert Membership.objects.get(scope=personal, user=user).role == Role.ADMIN


def test_create_scope_makes_creator_admin(tenancy, api):
    client = api(tenancy.writer)
    response = client.post(
        "/api/v1/scopes", {"name": "Backend", "slug": "backend", "kind": "project"}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["id"].startswith("scp_")
    assert (body["kind"], body["role"], body["owner"]) == ("project", "admin", "writer")
    listed = [s["slug"] for s in client.get("/api/v1/scopes").json()["results"]]
    assert "backend" in listed and "team" in listed


def test_slug_is_unique_per_owner_only(tenancy, api):
    body = {"name": "Team", "slug": "team", "kind": "team"}
    again = api(tenancy.owner).post("/api/v1/scopes", body, format="json")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"
    assert "slug" in again.json()["error"]["details"]
    other_owner = api(tenancy.outsider).post("/api/v1/scopes", body, format="json")
    assert other_owner.status_code == 201


def test_rename_and_delete_scope(tenancy, api):
    client = api(tenancy.owner)
    url = f"/api/v1/scopes/{tenancy.team.public_id}"
    renamed = client.patch(url, {"name": "Platform", "slug": "platform"}, format="json")
    assert renamed.status_code == 200
    assert (renamed.json()["name"], renamed.json()["slug"]) == ("Platform", "platform")
    assert client.delete(url).status_code == 204
    assert client.get(url).status_code == 404


def test_personal_scope_cannot_be_deleted_or_shared(tenancy, api):
    personal = tenancy.owner.owned_scopes.get(kind="personal")
    client = api(tenancy.owner)
    assert client.delete(f"/api/v1/scopes/{personal.public_id}").status_code == 409
    added = client.post(
        f"/api/v1/scopes/{personal.public_id}/members",
        {"username": "writer", "role": "reader"},
        format="json",
    )
    assert added.status_code == 409


def test_members_add_change_remove(tenancy, api):
    client = api(tenancy.owner)
    base = f"/api/v1/scopes/{tenancy.team.public_id}/members"
    added = client.post(base, {"username": "outsider", "role": "writer"}, format="json")
    assert added.status_code == 201
    assert added.json()["role"] == "writer"
    twice = client.post(base, {"username": "outsider", "role": "writer"}, format="json")
    assert twice.status_code == 409
    changed = client.patch(f"{base}/outsider", {"role": "admin"}, format="json")
    assert changed.json()["role"] == "admin"
    roles = {m["username"]: m["role"] for m in client.get(base).json()["results"]}
    assert roles == {"owner": "admin", "outsider": "admin", "writer": "writer", "reader": "reader"}
    assert client.delete(f"{base}/outsider").status_code == 204
    assert client.delete(f"{base}/outsider").status_code == 404
    unknown = client.post(base, {"username": "nobody", "role": "reader"}, format="json")
    assert unknown.status_code == 400
    assert "username" in unknown.json()["error"]["details"]


def test_last_admin_can_neither_leave_nor_be_demoted(tenancy, api):
    client = api(tenancy.owner)
    base = f"/api/v1/scopes/{tenancy.team.public_id}/members"
    demote = client.patch(f"{base}/owner", {"role": "writer"}, format="json")
    assert demote.status_code == 409
    leave = client.delete(f"{base}/owner")
    assert leave.status_code == 409
    assert "last admin" in leave.json()["error"]["message"]
    # With a second admin both become possible.
    client.patch(f"{base}/writer", {"role": "admin"}, format="json")
    assert client.patch(f"{base}/owner", {"role": "writer"}, format="json").status_code == 200
    assert api(tenancy.owner).delete(f"{base}/owner").status_code == 204


def test_reader_can_leave_a_scope(tenancy, api):
    client = api(tenancy.reader)
    url = f"/api/v1/scopes/{tenancy.team.public_id}"
    assert client.delete(f"{url}/members/reader").status_code == 204
    assert client.get(url).status_code == 404


def test_me_describes_the_caller(tenancy, api):
    body = api(tenancy.reader, read_only=True, name="laptop").get("/api/v1/me").json()
    assert body["username"] == "reader"
    assert body["token"]["read_only"] is True and body["token"]["name"] == "laptop"
    roles = {s["slug"]: s["role"] for s in body["scopes"]}
    assert roles == {"personal": "admin", "team": "reader"}


def test_session_authentication_enforces_csrf(tenancy):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(tenancy.owner)
    assert client.get("/api/v1/me").status_code == 200
    body = {"name": "X", "slug": "x", "kind": "team"}
    refused = client.post("/api/v1/scopes", body, format="json")
    assert refused.status_code == 403
    client.get("/login/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    accepted = client.post("/api/v1/scopes", body, format="json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201
