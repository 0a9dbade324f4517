"""Bad input answers 400 naming the field, never a 500."""

from __future__ import annotations

import pytest
from django.test import override_settings


@pytest.fixture
def client(tenancy, api):
    return api(tenancy.owner)


def post_raw(client, body: bytes, path="/api/v1/scopes", content_type="application/json"):
    return client.generic("POST", path, body, content_type=content_type)


def details(response) -> dict:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_failed"
    assert error["message"]
    return error["details"]


def test_unknown_field(client):
    response = client.post(
        "/api/v1/scopes", {"name": "A", "slug": "a", "kind": "team", "color": "red"}, format="json"
    )
    assert details(response) == {"color": ["Unknown field."]}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": 5, "slug": "a", "kind": "team"}, "name"),
        ({"name": "A", "slug": ["a"], "kind": "team"}, "slug"),
        ({"name": "A", "slug": "a", "kind": "galaxy"}, "kind"),
        ({"name": "A", "slug": "a", "kind": "personal"}, "kind"),
        ({"name": "", "slug": "a", "kind": "team"}, "name"),
        ({"name": "A\x00B", "slug": "a", "kind": "team"}, "name"),
        ({"slug": "a", "kind": "team"}, "name"),
        ({"name": "A", "slug": "Bad Slug!", "kind": "team"}, "slug"),
        ({"name": "A", "slug": "-edge-", "kind": "team"}, "slug"),
        ({"name": "A", "slug": "über", "kind": "team"}, "slug"),
        ({"name": "A", "slug": "x" * 51, "kind": "team"}, "slug"),
    ],
)
def test_wrong_values_name_the_field(client, body, field):
    assert field in details(client.post("/api/v1/scopes", body, format="json"))


def test_wrong_types_in_tokens(client):
    assert "read_only" in details(
        client.post("/api/v1/tokens", {"name": "x", "read_only": "yes"}, format="json")
    )
    assert "scopes" in details(
        client.post("/api/v1/tokens", {"name": "x", "scopes": "scp_1"}, format="json")
    )
    assert "expires_at" in details(
        client.post("/api/v1/tokens", {"name": "x", "expires_at": "soon"}, format="json")
    )


def test_role_must_be_known(tenancy, client):
    url = f"/api/v1/scopes/{tenancy.team.public_id}/members"
    assert "role" in details(
        client.post(url, {"username": "outsider", "role": "god"}, format="json")
    )


def test_malformed_json(client):
    assert "body" in details(post_raw(client, b'{"name": "A",'))


def test_json_that_is_not_an_object(client):
    assert "body" in details(post_raw(client, b"[1, 2, 3]"))


def test_nan_is_not_json(client):
    assert "body" in details(post_raw(client, b'{"name": NaN, "slug": "a", "kind": "team"}'))


def test_non_utf8_body(client):
    assert "body" in details(post_raw(client, b'{"name": "\xff\xfe", "slug": "a", "kind": "team"}'))


@override_settings(MAX_BODY_BYTES=2048)
def test_oversized_body(client):
    body = b'{"name": "' + b"a" * 4096 + b'", "slug": "a", "kind": "team"}'
    response = post_raw(client, body)
    assert response.status_code == 413, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_failed"
    assert "2048" in error["details"]["body"][0]


def test_unsupported_media_type_names_the_body(client):
    response = post_raw(client, b"name=A", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert "body" in response.json()["error"]["details"]


def test_unknown_api_path_answers_json_404(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_wrong_method_answers_json(client):
    response = client.put("/api/v1/me", {}, format="json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
