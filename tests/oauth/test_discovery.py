"""Discovery: the metadata documents (RFC 8414, RFC 9728) and the challenges of /mcp and the API."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

PUBLIC = settings.PUBLIC_URL


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/.well-known/oauth-protected-resource", f"{PUBLIC}/mcp"),
        ("/.well-known/oauth-protected-resource/mcp", f"{PUBLIC}/mcp"),
        ("/.well-known/oauth-protected-resource/api/v1", f"{PUBLIC}/api/v1"),
    ],
)
def test_protected_resource_metadata(db, path, resource):
    answer = Client().get(path).json()
    assert answer["resource"] == resource
    assert answer["authorization_servers"] == [PUBLIC]
    assert answer["scopes_supported"] == ["memories:read", "memories:write"]
    assert answer["bearer_methods_supported"] == ["header"]


def test_authorization_server_metadata(db):
    answer = Client().get("/.well-known/oauth-authorization-server").json()
    assert answer["issuer"] == PUBLIC
    assert answer["code_challenge_methods_supported"] == ["S256"]
    assert answer["response_types_supported"] == ["code"]
    assert answer["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert answer["registration_endpoint"] == f"{PUBLIC}/oauth/register/"
    assert answer["authorization_endpoint"] == f"{PUBLIC}/oauth/authorize/"
    assert answer["token_endpoint"] == f"{PUBLIC}/oauth/token/"
    assert answer["revocation_endpoint"] == f"{PUBLIC}/oauth/revoke/"
    assert answer["client_id_metadata_document_supported"] is True
    assert answer["authorization_response_iss_parameter_supported"] is True
    assert "introspection_endpoint" not in answer


def test_registration_is_not_advertised_when_turned_off(db, settings):
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "DCR_ENABLED": False}
    answer = Client().get("/.well-known/oauth-authorization-server").json()
    assert "registration_endpoint" not in answer
    assert Client().post("/oauth/register/", {}, content_type="application/json").status_code == 404


def test_the_api_challenge_names_its_resource_metadata(db):
    response = Client().get("/api/v1/me", HTTP_AUTHORIZATION="Bearer nope")
    assert response.status_code == 401
    assert (
        f'resource_metadata="{PUBLIC}/.well-known/oauth-protected-resource/api/v1"'
        in response["WWW-Authenticate"]
    )
