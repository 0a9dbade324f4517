"""The MCP SDK's own OAuth client signs in to a server started as `make run` starts it.

Discovery from the 401, registration by a client ID metadata document (served on 127.0.0.1
over https, from the one origin the operator allowed: no other loopback origin is fetched) and by
dynamic registration, the consent in headless chromium by a signed-in person choosing one scope,
the exchange with PKCE; then remember and recall inside that scope succeed and answer not_found
outside it. A revoke on the dashboard's tokens page answers the next call 401; a replayed code, a
wrong verifier and a token for the other resource are refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from urllib.parse import urlencode

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from tests.mcp_inproc import structured
from tests.oauth.e2e_support import Callback, in_chromium, self_signed, serve_document
from tests.served import Served, free_port

pytestmark = pytest.mark.slow
PASSWORD = "a long pass phrase 42"
SETUP = """
import json
from django.contrib.auth import get_user_model
from scopes.services import scope_create
from zeromemory.core.actor import Actor
user = get_user_model().objects.create_user("dana", password={password!r})
team = scope_create(actor=Actor(user=user), name="Team", slug="team", kind="team")
personal = user.owned_scopes.get(kind="personal")
print(json.dumps({{"team": team.public_id, "personal": personal.public_id}}))
"""


class Storage:
    def __init__(self) -> None:
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info) -> None:
        self.client = client_info


def consent(base: str, url: str, callback: Callback, scope_id: str) -> None:
    def steps(page) -> None:
        page.goto(url)
        page.check(f"input[name=scopes][value={scope_id}]")
        page.click("button[name=allow]")
        assert callback.done.wait(30), "the browser never reached the callback"

    in_chromium(base, "dana", PASSWORD, steps)


async def sign_in_and_work(base: str, ids: dict, *, document_url: str | None) -> dict:
    callback = Callback()
    storage = Storage()

    async def redirect_handler(url: str) -> None:
        await anyio.to_thread.run_sync(consent, base, url, callback, ids["team"])

    async def callback_handler() -> AuthorizationCodeResult:
        query = callback.received
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    metadata = OAuthClientMetadata(
        client_name="SDK agent",
        redirect_uris=[callback.url],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider = OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=document_url,
    )
    outcome: dict = {}
    try:
        async with (
            httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=120)) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for scope, key in ((ids["team"], "inside"), (ids["personal"], "outside")):
                wrote = await session.call_tool(
                    "remember",
                    {"content": f"Deploys run on Fridays ({key}).", "kind": "fact", "scope": scope},
                )
                found = await session.call_tool("recall", {"query": "deploys", "scopes": [scope]})
                outcome[key] = (structured(wrote), structured(found))
    finally:
        callback.close()
    outcome["client_id"] = storage.client.client_id
    outcome["access_token"] = storage.tokens.access_token
    outcome["code"] = callback.received["code"]
    outcome["redirect_uri"] = callback.url
    return outcome


def mcp_status(base: str, token: str) -> int:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx2.post(f"{base}/mcp", json=call, headers=headers, timeout=30).status_code


def check_scoped(outcome: dict) -> None:
    wrote, found = outcome["inside"]
    assert wrote["id"].startswith("mem_"), wrote
    assert [hit["id"] for hit in found["results"]] == [wrote["id"]], found
    for answer in outcome["outside"]:
        assert answer["error"]["code"] == "not_found", answer


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(
        hashlib.sha256(verifier.encode()).digest()
    ).decode().rstrip("=")


def test_the_sdk_client_signs_in_by_url_alone(tmp_path):
    cert, key = self_signed(tmp_path)
    document, document_url = serve_document(
        cert,
        key,
        {
            "client_name": "Document agent",
            "redirect_uris": ["http://127.0.0.1:1/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    port = free_port()
    served = Served(
        tmp_path,
        port=port,
        ZM_PUBLIC_URL=f"http://127.0.0.1:{port}",
        ZM_OAUTH_CIMD_ALLOW_ORIGINS=document_url.removesuffix("/client.json"),
        SSL_CERT_FILE=str(cert),
        ZM_WEB_PROCESSES="1",
    )
    base = served.url
    try:
        served.wait_ready()
        ids = json.loads(served.django(SETUP.format(password=PASSWORD)))

        # Discovery starts from the 401 alone.
        unauthorized = httpx2.post(f"{base}/mcp", json={}, timeout=30)
        assert unauthorized.status_code == 401
        assert (
            f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            in unauthorized.headers["WWW-Authenticate"]
        )

        by_document = anyio.run(lambda: sign_in_and_work(base, ids, document_url=document_url))
        assert by_document["client_id"] == document_url
        check_scoped(by_document)
        by_registration = anyio.run(lambda: sign_in_and_work(base, ids, document_url=None))
        assert by_registration["client_id"] != document_url
        check_scoped(by_registration)

        token_url = f"{base}/oauth/token/"
        replay = httpx2.post(
            token_url,
            data={
                "grant_type": "authorization_code",
                "code": by_registration["code"],
                "redirect_uri": by_registration["redirect_uri"],
                "client_id": by_registration["client_id"],
                "code_verifier": "x" * 64,
            },
        )
        assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"

        # A token for the API, asked for by hand: a wrong verifier is refused, the right one
        # gets a token that the API accepts and /mcp does not.
        callback = Callback()
        verifier, challenge = pkce()
        params = {
            "response_type": "code",
            "client_id": by_registration["client_id"],
            "redirect_uri": callback.url,
            "state": "s",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "memories:read memories:write",
            "resource": f"{base}/api/v1",
        }
        consent(base, f"{base}/oauth/authorize/?{urlencode(params)}", callback, ids["team"])
        callback.close()
        exchange = {
            "grant_type": "authorization_code",
            "code": callback.received["code"],
            "redirect_uri": callback.url,
            "client_id": by_registration["client_id"],
        }
        wrong = httpx2.post(token_url, data={**exchange, "code_verifier": "y" * 64})
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        right = httpx2.post(token_url, data={**exchange, "code_verifier": verifier})
        assert right.status_code == 200, right.text
        api_token = right.json()["access_token"]
        assert mcp_status(base, api_token) == 401
        me = httpx2.get(f"{base}/api/v1/me", headers={"Authorization": f"Bearer {api_token}"})
        assert me.status_code == 200, me.text

        # Revoked on the dashboard's tokens page: the next call answers 401.
        assert mcp_status(base, by_document["access_token"]) == 200

        def revoke(page) -> None:
            page.goto("/tokens/")
            row = page.locator("#grants tr", has_text="Document agent")
            row.locator("button.danger-link").click()
            page.locator("#grants tr", has_text="Document agent").locator(
                ".badge.danger"
            ).wait_for()

        in_chromium(base, "dana", PASSWORD, revoke)
        assert mcp_status(base, by_document["access_token"]) == 401
        assert mcp_status(base, by_registration["access_token"]) == 200
    finally:
        document.shutdown()
        served.cleanup()
