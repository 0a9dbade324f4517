"""The official TypeScript MCP SDK's OAuth client (what Claude Code, Cursor and VS Code build on)
signs in to a served instance end to end: `tests/mcp_ts/oauth.mjs` uses the SDK's `auth()` through
its transport with an in-memory `OAuthClientProvider`; this test plays the person.

From the 401 alone the SDK discovers the resource and the authorization server, identifies itself
by a client ID metadata document served here over https (from the one origin the operator allowed)
or by dynamic registration, and sends the person to the consent page with PKCE S256. The person,
signed in over HTTP, allows one scope; the SDK exchanges the code, lists the tools and recalls.
When the access token has expired, its next call refreshes and succeeds with a new token; once the
person revokes the grant on the tokens page, the next call answers 401 and the SDK reports it as
unauthorized instead of hanging.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from django.utils import timezone
from oauth2_provider.models import AccessToken

from memories.mcp.contract import DESCRIPTIONS
from scopes.oauth.models import OAuthGrant
from scopes.services import scope_create
from tests.factories import UserFactory
from tests.memories.mcp_support import remember_directly
from tests.memories.mcp_ts_support import HARNESS_DIR, node
from tests.oauth.e2e_support import (
    consent_over_http,
    hidden_inputs,
    self_signed,
    serve_document,
    signed_in_over_http,
)
from tests.served import free_port, start_uvicorn, stop_process_group
from zeromemory.core.actor import Actor

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PASSWORD = "a long pass phrase 42"
REDIRECT = "http://127.0.0.1:33418/callback"
WAIT_SECONDS = 120


class Conversation:
    """oauth.mjs under node: one JSON line to it, one JSON line back, killed if it stalls."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.process = subprocess.Popen(
            [node(), "oauth.mjs"],
            cwd=HARNESS_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # A stalled SDK fails the test (its stdout closes), never hangs it.
        self.watchdog = threading.Timer(WAIT_SECONDS, self.process.kill)
        self.watchdog.start()
        self.send(plan)

    def send(self, message: dict[str, Any]) -> None:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def receive(self, step: str) -> dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=10)
            pytest.fail(f"oauth.mjs ended before {step!r}:\n{self.process.stderr.read()}")
        message = json.loads(line)
        assert message["step"] == step, message
        return message

    def close(self) -> str:
        self.watchdog.cancel()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        return self.process.stderr.read()


def requested(message: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(r["method"], r["path"], r["status"]) for r in message["requests"]]


def expire(access_token: str) -> None:
    """The access token's lifetime runs out (its expiry moved into the past, no waiting)."""
    checksum = hashlib.sha256(access_token.encode()).hexdigest()
    expired = AccessToken.objects.filter(token_checksum=checksum).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    assert expired == 1


def revoke_on_tokens_page(person: httpx2.Client, client_id: str) -> None:
    grant = OAuthGrant.objects.get(application__client_id=client_id)
    page = person.get("/tokens/")
    assert f"grant-{grant.token.public_id}" in page.text
    answer = person.post(
        f"/tokens/{grant.token.public_id}/revoke/", data={**hidden_inputs(page.text)}
    )
    assert answer.status_code == 302, answer.text


def sign_in_refresh_and_revoke(
    base: str, person: httpx2.Client, team: str, *, document_url: str | None
) -> dict[str, Any]:
    sdk = Conversation(
        {
            "url": f"{base}/mcp",
            "redirectUrl": REDIRECT,
            "clientMetadataUrl": document_url,
            "query": "staging cluster deploys",
        }
    )
    seen: dict[str, Any] = {}
    try:
        seen["authorize"] = sdk.receive("authorize")
        redirect = consent_over_http(person, seen["authorize"]["url"], [team])
        sdk.send({"code": redirect["code"], "state": redirect.get("state")})
        seen["signed_in"] = sdk.receive("signed_in")
        expire(seen["signed_in"]["accessToken"])
        sdk.send({})
        seen["refreshed"] = sdk.receive("refreshed")
        revoke_on_tokens_page(person, seen["signed_in"]["clientId"])
        sdk.send({})
        seen["revoked"] = sdk.receive("revoked")
    finally:
        seen["stderr"] = sdk.close()
    return seen


def check(seen: dict[str, Any], base: str, memory_id: str) -> None:
    # Discovery from the 401: the resource's metadata, then the authorization server's.
    discovery = requested(seen["authorize"])
    assert ("POST", "/mcp", 401) in discovery, discovery
    assert ("GET", "/.well-known/oauth-protected-resource/mcp", 200) in discovery, discovery
    assert ("GET", "/.well-known/oauth-authorization-server", 200) in discovery, discovery

    # PKCE S256 and the resource the token will be bound to, in the SDK's own request.
    url = seen["authorize"]["url"]
    assert url.startswith(f"{base}/oauth/authorize/?"), url
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["resource"] == f"{base}/mcp"
    assert query["redirect_uri"] == REDIRECT

    # The code exchanged for a token; the tools listed and a recall inside the scope answered.
    signed_in = seen["signed_in"]
    exchanged = [r for r in signed_in["requests"] if r["path"] == "/oauth/token/"]
    assert [(r["grantType"], r["status"]) for r in exchanged] == [("authorization_code", 200)]
    assert set(signed_in["tools"]) == set(DESCRIPTIONS)
    assert not signed_in["recall"]["isError"], signed_in["recall"]
    hits = json.loads(signed_in["recall"]["text"])["results"]
    assert [hit["id"] for hit in hits] == [memory_id]

    # The expired token answers 401; the SDK refreshes and the same call succeeds.
    refreshed = seen["refreshed"]
    assert requested(refreshed)[0] == ("POST", "/mcp", 401), refreshed["requests"]
    refreshes = [r for r in refreshed["requests"] if r["path"] == "/oauth/token/"]
    assert [(r["grantType"], r["status"]) for r in refreshes] == [("refresh_token", 200)]
    assert refreshed["accessToken"] != signed_in["accessToken"]
    assert not refreshed["recall"]["isError"], refreshed["recall"]
    assert [hit["id"] for hit in json.loads(refreshed["recall"]["text"])["results"]] == [memory_id]

    # Revoked: the call answers 401, the refresh is refused, the SDK reports it unauthorized.
    revoked = seen["revoked"]
    assert revoked["outcome"] == "thrown", revoked
    assert revoked["name"] == "UnauthorizedError", revoked
    assert requested(revoked)[0] == ("POST", "/mcp", 401), revoked["requests"]
    refused = [r for r in revoked["requests"] if r["path"] == "/oauth/token/"]
    assert [(r["grantType"], r["status"]) for r in refused] == [("refresh_token", 400)]
    assert revoked["askedToSignInAgain"], revoked


def test_the_typescript_sdk_signs_in_refreshes_and_is_revoked(tmp_path, kinds_seeded):
    node()  # fails at once, saying what to install, when node or the pinned SDK is missing
    person_user = UserFactory(username="dana", password=PASSWORD)
    team = scope_create(actor=Actor(user=person_user), name="Team", slug="team", kind="team")
    memory_id = remember_directly(
        person_user, "Deploys go through the staging cluster.", team.public_id
    )

    cert, key = self_signed(tmp_path)
    document_server, document_url = serve_document(
        cert,
        key,
        {
            "client_name": "TypeScript SDK agent",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc, _ = start_uvicorn(
        port=port,
        ZM_PUBLIC_URL=base,
        ZM_OAUTH_CIMD_ALLOW_ORIGINS=document_url.removesuffix("/client.json"),
        SSL_CERT_FILE=str(cert),
        ZM_TESTING="true",  # the test's password hasher
    )
    try:
        person = signed_in_over_http(base, "dana", PASSWORD)
        by_document = sign_in_refresh_and_revoke(
            base, person, team.public_id, document_url=document_url
        )
        by_registration = sign_in_refresh_and_revoke(
            base, person, team.public_id, document_url=None
        )
    finally:
        document_server.shutdown()
        output = stop_process_group(proc)
    assert "Traceback" not in output, output

    check(by_document, base, memory_id)
    assert by_document["signed_in"]["clientId"] == document_url
    assert not [r for r in requested(by_document["authorize"]) if r[1] == "/oauth/register/"]

    check(by_registration, base, memory_id)
    assert by_registration["signed_in"]["clientId"] != document_url
    registered = requested(by_registration["authorize"])
    assert [r for r in registered if r[1] == "/oauth/register/"] == [
        ("POST", "/oauth/register/", 201)
    ]
