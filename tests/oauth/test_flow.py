"""The authorization code flow in process: consent, PKCE, the tokens and what they act as."""

from __future__ import annotations

from django.test import Client
from rest_framework.test import APIClient

from scopes.models import ApiToken
from scopes.oauth.models import OAuthGrant
from tests.mcp_inproc import call_tool, structured
from tests.oauth.flow import API, MCP, REDIRECT, authorize, exchange, register


def signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def personal(user):
    return user.owned_scopes.get(kind="personal")


def test_consent_issues_a_token_that_acts_as_a_restricted_token(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id])
    assert auth.query["state"] == "st4te" and auth.query["iss"]
    response = exchange(auth, resource=MCP)
    assert response.status_code == 200, response.content
    tokens = response.json()
    assert tokens["token_type"] == "Bearer" and tokens["refresh_token"]
    assert tokens["scope"] == "memories:read memories:write"
    grant = OAuthGrant.objects.get()
    assert grant.token.scope_restricted and not grant.token.read_only
    assert list(grant.token.restricted_scopes.all()) == [tenancy.team]
    # Stored as hashes only: the secret is in no column.
    from oauth2_provider.models import AccessToken, RefreshToken

    assert not AccessToken.objects.filter(token=tokens["access_token"]).exists()
    assert not RefreshToken.objects.filter(token=tokens["refresh_token"]).exists()

    inside = call_tool(tokens["access_token"], "list_scopes", {})
    assert [s["id"] for s in structured(inside)["scopes"]] == [tenancy.team.public_id]
    outside = call_tool(
        tokens["access_token"],
        "recall",
        {"query": "x", "scopes": [personal(tenancy.owner).public_id]},
    )
    assert structured(outside)["error"]["code"] == "not_found"
    # Bound to /mcp: the API refuses it.
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens['access_token']}")
    assert api.get("/api/v1/me").status_code == 401


def test_a_replayed_code_and_a_wrong_verifier_are_refused(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id])
    assert exchange(auth, verifier="x" * 50).status_code == 400
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id])
    assert exchange(auth).status_code == 200
    replay = exchange(auth)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"


def test_plain_pkce_and_a_foreign_resource_are_refused(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    plain = browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": "a" * 43,
            "code_challenge_method": "plain",
        },
    )
    assert plain.status_code == 400 and "Location" not in plain  # a page, not a redirect
    assert "invalid_request" in plain.content.decode()
    foreign = browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": "a" * 43,
            "code_challenge_method": "S256",
            "resource": "https://elsewhere.example/mcp",
        },
    )
    assert foreign.status_code == 400 and "Location" not in foreign
    assert "invalid_target" in foreign.content.decode()


def test_an_api_token_is_for_the_api_only(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id], resource=API)
    token = exchange(auth, resource=API).json()["access_token"]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    me = api.get("/api/v1/me")
    assert me.status_code == 200, me.content
    assert structured(call_tool(token, "list_scopes", {}))["error"]["code"] == "unauthorized"


def test_read_only_and_revocation(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id], read_only=True)
    tokens = exchange(auth, resource=MCP).json()
    assert tokens["scope"] == "memories:read"
    write = call_tool(
        tokens["access_token"],
        "remember",
        {"content": "Lint on push.", "kind": "convention", "scope": tenancy.team.public_id},
    )
    assert structured(write)["error"]["code"] == "forbidden"
    grant = OAuthGrant.objects.get()
    revoked = browser.post(f"/tokens/{grant.token.public_id}/revoke/")
    assert revoked.status_code == 302
    assert ApiToken.objects.get(pk=grant.token.pk).revoked_at is not None
    gone = call_tool(tokens["access_token"], "list_scopes", {})
    assert structured(gone)["error"]["code"] == "unauthorized"
    refresh = Client().post(
        "/oauth/token/",
        {
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client_id,
        },
    )
    assert refresh.status_code == 400


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_family(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    tokens = exchange(authorize(browser, client_id, scopes=[tenancy.team.public_id]), resource=MCP)
    first = tokens.json()

    def refresh(token):
        return Client().post(
            "/oauth/token/",
            {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id},
        )

    second = refresh(first["refresh_token"])
    assert second.status_code == 200, second.content
    second = second.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert not structured(call_tool(second["access_token"], "list_scopes", {})).get("error")
    assert refresh(first["refresh_token"]).status_code == 400
    # The replay revoked the whole family, the new tokens with it.
    assert refresh(second["refresh_token"]).status_code == 400
    gone = call_tool(second["access_token"], "list_scopes", {})
    assert structured(gone)["error"]["code"] == "unauthorized"


def test_a_consent_never_exchanged_is_no_token_of_the_person(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id])
    api = APIClient()
    api.force_authenticate(tenancy.owner)
    pending = OAuthGrant.objects.get().token
    listed = [t["id"] for t in api.get("/api/v1/tokens").json()["results"]]
    assert pending.public_id not in listed
    assert exchange(auth, resource=MCP).status_code == 200
    listed = [t["id"] for t in api.get("/api/v1/tokens").json()["results"]]
    assert pending.public_id in listed
