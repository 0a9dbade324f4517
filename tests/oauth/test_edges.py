"""The edges of the authorization server that an attacker tried (issue 37): errors of a client that
registered itself are shown on a page and never sent to its redirect URI unasked; the client
update endpoint keeps the registration policy; code challenges follow RFC 7636; consent is
always asked; a client ID metadata document is never fetched from a non-public address."""

from __future__ import annotations

import json
import socket

import pytest
from django.test import Client
from oauth2_provider.models import Application

from scopes.oauth.fetcher import is_public
from scopes.oauth.models import OAuthGrant
from tests.oauth.flow import MCP, REDIRECT, access_token, register

GOOD_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636 appendix B


def signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def authorize_params(client_id: str, **changes) -> dict:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "st4te",
        "code_challenge": GOOD_CHALLENGE,
        "code_challenge_method": "S256",
        "scope": "memories:read memories:write",
        "resource": MCP,
    }
    params.update(changes)
    return {key: value for key, value in params.items() if value is not None}


BAD_REQUESTS = {
    "plain pkce": {"code_challenge_method": "plain"},
    "unknown pkce method": {"code_challenge_method": "S512"},
    "unknown scope": {"scope": "memories:read admin:everything"},
    "missing challenge": {"code_challenge": None, "code_challenge_method": None},
    "foreign resource": {"resource": "https://elsewhere.example/mcp"},
    "challenge of three characters": {"code_challenge": "abc"},
    "challenge of 42 characters": {"code_challenge": "a" * 42},
    "challenge of 129 characters": {"code_challenge": "a" * 129},
    "challenge outside the alphabet": {"code_challenge": "a" * 42 + "+"},
    "challenge with a space": {"code_challenge": "a" * 42 + " "},
    "unsupported response type": {"response_type": "token"},
}


@pytest.mark.parametrize("name", BAD_REQUESTS)
def test_an_invalid_request_is_shown_on_a_page_never_redirected(tenancy, name):
    client_id = register()["client_id"]
    page = signed_in(tenancy.owner).get(
        "/oauth/authorize/", authorize_params(client_id, **BAD_REQUESTS[name])
    )
    assert page.status_code == 400, (page.status_code, page.get("Location"))
    assert "Location" not in page
    text = page.content.decode()
    assert 'id="oauth-error"' in text
    # The person may go back to the client by a link of their own choosing, with the error.
    if name != "unsupported response type":
        assert f'href="{REDIRECT}?' in text and "state=st4te" in text
    assert not Application.objects.get(client_id=client_id).grant_set.exists()


def test_a_metadata_document_client_error_is_shown_on_a_page_too(tenancy, documents):
    url = documents(
        {"client_name": "Doc", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    )
    page = signed_in(tenancy.owner).get(
        "/oauth/authorize/", authorize_params(url, code_challenge_method="plain")
    )
    assert page.status_code == 400 and "Location" not in page


def test_a_good_challenge_gets_the_consent_page(tenancy):
    client_id = register()["client_id"]
    for challenge in (GOOD_CHALLENGE, "a" * 43, "A-._~" * 25 + "abc"):
        page = signed_in(tenancy.owner).get(
            "/oauth/authorize/", authorize_params(client_id, code_challenge=challenge)
        )
        assert page.status_code == 200, challenge


def test_a_tampered_challenge_in_the_consent_form_is_refused(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    page = browser.get("/oauth/authorize/", authorize_params(client_id))
    form = page.context["form"]
    data = {name: form[name].value() or "" for name in form.fields if name != "scopes"}
    data.update(allow="on", scopes=[tenancy.team.public_id], code_challenge="abc")
    data.pop("read_only", None)
    answer = browser.post("/oauth/authorize/", data)
    assert answer.status_code == 400 and "Location" not in answer
    assert not Application.objects.get(client_id=client_id).grant_set.exists()


def test_denying_sends_the_person_back_to_the_client(tenancy):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    page = browser.get("/oauth/authorize/", authorize_params(client_id))
    form = page.context["form"]
    data = {name: form[name].value() or "" for name in form.fields if name != "scopes"}
    data.pop("allow", None)
    data.pop("read_only", None)
    data["scopes"] = [tenancy.team.public_id]
    answer = browser.post("/oauth/authorize/", data)
    assert answer.status_code == 302 and "error=access_denied" in answer["Location"]


@pytest.mark.parametrize("prompt", ["auto", "force", "none"])
def test_consent_is_asked_even_of_a_client_holding_a_live_token(tenancy, prompt):
    client_id = register()["client_id"]
    browser = signed_in(tenancy.owner)
    access_token(browser, client_id, scopes=[tenancy.team.public_id])
    page = browser.get("/oauth/authorize/", authorize_params(client_id, approval_prompt=prompt))
    assert page.status_code == 200, page.get("Location")
    assert 'id="consent"' in page.content.decode()
    assert OAuthGrant.objects.filter(application__client_id=client_id).count() == 1


def test_a_client_marked_to_skip_authorization_is_still_asked(tenancy):
    client_id = register()["client_id"]
    Application.objects.filter(client_id=client_id).update(skip_authorization=True)
    page = signed_in(tenancy.owner).get("/oauth/authorize/", authorize_params(client_id))
    assert page.status_code in (200, 400) and "Location" not in page
    assert not Application.objects.get(client_id=client_id).grant_set.exists()


# The client update endpoint (RFC 7592) keeps the registration policy.

GOOD = {
    "client_name": "A",
    "redirect_uris": [REDIRECT],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "none",
}
BAD_UPDATES = {
    "plain http elsewhere": {**GOOD, "redirect_uris": ["http://evil.example/cb"]},
    "user info": {**GOOD, "redirect_uris": ["https://user:pw@evil.example/cb"]},
    "javascript": {**GOOD, "redirect_uris": ["javascript:alert(1)"]},
    "too many": {**GOOD, "redirect_uris": [REDIRECT] * 11},
    "huge": {**GOOD, "client_name": "x" * 40_000},
    "client credentials": {**GOOD, "grant_types": ["client_credentials"]},
}


def update(registration: dict, body: dict) -> tuple[int, dict]:
    response = Client().put(
        f"/oauth/register/{registration['client_id']}/",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {registration['registration_access_token']}",
    )
    return response.status_code, response.json()


@pytest.mark.parametrize("name", BAD_UPDATES)
def test_an_update_that_registration_would_refuse_is_refused(db, name):
    registration = register()
    status, answer = update(registration, BAD_UPDATES[name])
    assert status == 400 and answer["error"] == "invalid_client_metadata", answer
    application = Application.objects.get(client_id=registration["client_id"])
    assert application.redirect_uris == REDIRECT and application.name == "Test agent"


def test_a_good_update_is_applied(db):
    registration = register()
    status, answer = update(registration, {**GOOD, "client_name": "Renamed"})
    assert status == 200, answer
    assert Application.objects.get(client_id=registration["client_id"]).name == "Renamed"


def test_updates_count_against_the_registration_rate(db, settings):
    settings.OAUTH_DCR_PER_HOUR = 3
    registration, statuses = register(), []
    for _ in range(3):  # the registration was the first; each answer carries the next token
        status, answer = update(registration, GOOD)
        statuses.append(status)
        registration = answer if status == 200 else registration
    assert statuses == [200, 200, 429]


# Client ID metadata documents are never fetched from a non-public address.


@pytest.fixture
def listener():
    """A TCP socket listening on loopback that tells whether anyone connected to it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)

    def connected() -> bool:
        try:
            conn, _ = sock.accept()
        except BlockingIOError:
            return False
        conn.close()
        return True

    yield sock.getsockname()[1], connected
    sock.close()


@pytest.mark.parametrize(
    "public_url",
    ["http://127.0.0.1:8000", "http://localhost:8000", "https://memory.example.com"],
)
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])
def test_no_connection_is_made_to_a_loopback_document(
    tenancy, settings, listener, public_url, host
):
    port, connected = listener
    settings.PUBLIC_URL = public_url
    url = f"https://{host}:{port}/client.json"
    page = signed_in(tenancy.owner).get("/oauth/authorize/", authorize_params(url))
    assert page.status_code == 400
    assert not connected(), "the server connected to a loopback port"
    assert not Application.objects.filter(client_id=url).exists()


@pytest.mark.parametrize(
    "ip", ["::127.0.0.1", "::a9fe:a9fe", "::ffff:0:7f00:1", "64:ff9b:1::7f00:1", "fec0::1"]
)
def test_ipv6_forms_that_lead_inside_are_not_public(ip):
    """Forms the toolkit's own check took for public addresses."""
    assert not is_public(ip)
    assert is_public("2606:4700::1111") and is_public("93.184.215.14")


def test_the_error_page_is_translated(tenancy):
    client_id = register()["client_id"]
    browser = Client(HTTP_ACCEPT_LANGUAGE="de")
    browser.force_login(tenancy.owner)
    page = browser.get("/oauth/authorize/", authorize_params(client_id, code_challenge="abc"))
    text = page.content.decode()
    assert page.status_code == 400
    assert "Diese Anmeldeanfrage kann nicht beantwortet werden" in text
    assert "Zurück zu 127.0.0.1:33418" in text


def test_an_allowed_origin_opens_no_other_port(tenancy, settings, listener):
    port, connected = listener
    settings.PUBLIC_URL = "http://127.0.0.1:8000"
    settings.OAUTH_CIMD_ALLOW_ORIGINS = [f"https://127.0.0.1:{port + 1}", "https://localhost"]
    url = f"https://127.0.0.1:{port}/client.json"
    page = signed_in(tenancy.owner).get("/oauth/authorize/", authorize_params(url))
    assert page.status_code == 400 and not connected()
