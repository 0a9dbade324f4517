"""The authorization code flow with PKCE driven through Django's test client: what the OAuth
tests share (the end-to-end test drives the real server with the MCP SDK's client instead)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

from django.conf import settings
from django.test import Client

REDIRECT = "http://127.0.0.1:33418/callback"
MCP = f"{settings.PUBLIC_URL}/mcp"
API = f"{settings.PUBLIC_URL}/api/v1"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def register(client: Client | None = None, **metadata) -> dict:
    body = {
        "client_name": "Test agent",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    response = (client or Client()).post("/oauth/register/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()


@dataclass
class Authorization:
    client_id: str
    verifier: str
    query: dict[str, str]

    @property
    def code(self) -> str:
        return self.query["code"]


def authorize(
    browser: Client,
    client_id: str,
    *,
    scopes: list[str],
    read_only: bool = False,
    resource: str | None = MCP,
    scope: str = "memories:read memories:write",
    redirect_uri: str = REDIRECT,
) -> Authorization:
    """GET the consent page, then allow it with these scopes; the redirect's parameters."""
    verifier, challenge = pkce()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": "st4te",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": scope,
    }
    if resource:
        params["resource"] = resource
    page = browser.get(f"/oauth/authorize/?{urlencode(params)}")
    assert page.status_code == 200, page.content
    form = page.context["form"]
    data = {name: form[name].value() or "" for name in form.fields if name not in ("scopes",)}
    data.update(allow="on", scopes=scopes)
    if read_only:
        data["read_only"] = "on"
    else:
        data.pop("read_only", None)
    answer = browser.post("/oauth/authorize/", data)
    assert answer.status_code == 302, answer.content
    query = {k: v[0] for k, v in parse_qs(urlsplit(answer["Location"]).query).items()}
    return Authorization(client_id=client_id, verifier=verifier, query=query)


def exchange(auth: Authorization, *, verifier: str | None = None, resource: str | None = None):
    body = {
        "grant_type": "authorization_code",
        "code": auth.code,
        "redirect_uri": REDIRECT,
        "client_id": auth.client_id,
        "code_verifier": verifier or auth.verifier,
    }
    if resource:
        body["resource"] = resource
    return Client().post("/oauth/token/", body)


def access_token(browser: Client, client_id: str, **options) -> str:
    resource = options.get("resource", MCP)
    response = exchange(authorize(browser, client_id, **options), resource=resource)
    assert response.status_code == 200, response.content
    return response.json()["access_token"]
