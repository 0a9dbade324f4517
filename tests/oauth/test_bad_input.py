"""Bad input on every OAuth endpoint: registration, metadata documents, authorize, token,
revoke. No answer is a 5xx; every refusal is an OAuth error and stores nothing."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from oauth2_provider.models import Application

from tests.oauth.flow import REDIRECT, authorize, exchange, register

GOOD = {"client_name": "A", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
BAD_REGISTRATIONS = {
    "malformed": b'{"a": ',
    "not an object": b"[1]",
    "invalid utf-8": b'{"client_name": "\xff"}',
    "huge": json.dumps({**GOOD, "client_name": "x" * 40_000}).encode(),
    "deep": b"[" * 10_000 + b"]" * 10_000,
    "client credentials": json.dumps({**GOOD, "grant_types": ["client_credentials"]}).encode(),
    "implicit": json.dumps({**GOOD, "response_types": ["token"]}).encode(),
    "no redirect": json.dumps({**GOOD, "redirect_uris": []}).encode(),
    "too many": json.dumps({**GOOD, "redirect_uris": [REDIRECT] * 11}).encode(),
}
ESCAPING_URIS = [
    "javascript:alert(1)",
    "data:text/html,hi",
    "file:///etc/passwd",
    "http://evil.example/callback",
    "https://evil.example/cb#frag",
    "https://user:pw@evil.example/cb",
    "https://evil.example\\@good.example/cb",
    "https://evil.example/cb\r\nLocation: x",
    "https:///nohost",
    "https://good.example:99999/cb",
    "//evil.example/cb",
    "",
    123,
    None,
]


def post(body: bytes) -> tuple[int, dict]:
    response = Client().post("/oauth/register/", body, content_type="application/json")
    return response.status_code, response.json()


@pytest.mark.parametrize("name", BAD_REGISTRATIONS)
def test_bad_registrations(db, name):
    status, answer = post(BAD_REGISTRATIONS[name])
    assert status == 400 and answer["error"] == "invalid_client_metadata", answer
    assert not Application.objects.exists()


@pytest.mark.parametrize("uri", ESCAPING_URIS, ids=repr)
def test_redirect_uris_that_try_to_escape(db, uri):
    status, answer = post(json.dumps({**GOOD, "redirect_uris": [uri]}).encode())
    assert status == 400 and answer["error"] == "invalid_client_metadata", answer
    assert not Application.objects.exists()


def test_registrations_are_limited_per_address(db, settings):
    settings.OAUTH_DCR_PER_HOUR = 2
    body = json.dumps(GOOD).encode()
    assert [post(body)[0] for _ in range(3)] == [201, 201, 429]
    assert Application.objects.count() == 2


def test_a_redirect_uri_is_matched_exactly(tenancy):
    client_id = register()["client_id"]
    browser = Client()
    browser.force_login(tenancy.owner)
    for uri in (REDIRECT + "/more", REDIRECT + "?x=1", "http://127.0.0.2:33418/callback"):
        page = browser.get(
            "/oauth/authorize/",
            {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": uri,
                "code_challenge": "a" * 43,
                "code_challenge_method": "S256",
            },
        )
        assert page.status_code == 400, uri  # shown here, never redirected to the stranger
    # Loopback: any port (RFC 8252).
    auth = authorize(
        browser,
        client_id,
        scopes=[tenancy.team.public_id],
        redirect_uri="http://127.0.0.1:4711/callback",
    )
    assert auth.code


@pytest.mark.parametrize(
    "body",
    [
        {"grant_type": "authorization_code", "code": "nope", "client_id": "x"},
        {"grant_type": "authorization_code", "code": "a\x00b", "client_id": "a\x00"},
        {"grant_type": "password", "username": "owner", "password": "x", "client_id": "x"},
        {"grant_type": "client_credentials", "client_id": "x"},
        {"grant_type": "refresh_token", "refresh_token": "x" * 5000, "client_id": "x"},
        {"grant_type": "authorization_code", "code": "\udc80", "client_id": "x"},
        {},
    ],
    ids=["unknown code", "nul", "password", "client credentials", "huge", "surrogate", "empty"],
)
def test_bad_token_requests(db, body):
    encoded = "&".join(f"{k}={v}" for k, v in body.items()).encode("utf-8", "surrogatepass")
    response = Client().post(
        "/oauth/token/", encoded, content_type="application/x-www-form-urlencoded"
    )
    assert 400 <= response.status_code < 500, response.content
    assert response.json()["error"]


def test_revoking_garbage_answers_without_error(db):
    client_id = register()["client_id"]
    response = Client().post("/oauth/revoke/", {"token": "x\x00" * 100, "client_id": client_id})
    assert response.status_code in (200, 400)


def test_a_token_request_for_another_resource_is_refused(tenancy):
    client_id = register()["client_id"]
    browser = Client()
    browser.force_login(tenancy.owner)
    auth = authorize(browser, client_id, scopes=[tenancy.team.public_id])
    response = exchange(auth, resource="https://elsewhere.example/mcp")
    assert response.status_code == 400 and response.json()["error"] == "invalid_target"


DOCUMENT = {"client_name": "Doc", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
BAD_DOCUMENTS = {
    "secret": {**DOCUMENT, "client_secret": "s"},
    "confidential": {**DOCUMENT, "token_endpoint_auth_method": "client_secret_basic"},
    "no redirect": {**DOCUMENT, "redirect_uris": []},
    "redirects away": {**DOCUMENT, "redirect_uris": ["http://evil.example/cb"]},
    "huge": {**DOCUMENT, "client_name": "x" * 10_000},
    "name not a string": {**DOCUMENT, "client_name": {"a": 1}},
    "other grant": {**DOCUMENT, "grant_types": ["client_credentials"]},
}


def consent_page(tenancy, client_id: str, redirect_uri: str = REDIRECT):
    browser = Client()
    browser.force_login(tenancy.owner)
    return browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": "a" * 43,
            "code_challenge_method": "S256",
        },
    )


def test_a_good_document_is_fetched_and_cached(tenancy, documents):
    url = documents(DOCUMENT)
    assert consent_page(tenancy, url).status_code == 200
    assert Application.objects.get(client_id=url).name == "Doc"


@pytest.mark.parametrize("name", BAD_DOCUMENTS)
def test_bad_documents_make_an_unknown_client(tenancy, documents, name):
    url = documents(BAD_DOCUMENTS[name])
    page = consent_page(tenancy, url)
    assert page.status_code == 400
    assert not Application.objects.filter(client_id=url, redirect_uris__contains="evil").exists()


@pytest.mark.parametrize(
    "client_id",
    [
        "http://127.0.0.1:9/client.json",
        "https://10.0.0.1/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::ffff:10.0.0.1]/client.json",
        "https://127.0.0.1:9/../client.json",
        "https://user@127.0.0.1:9/client.json",
    ],
)
def test_documents_at_hostile_addresses_are_not_fetched(tenancy, client_id):
    assert consent_page(tenancy, client_id).status_code == 400
    assert not Application.objects.exists()


def test_a_loopback_document_is_fetched_only_from_an_allowed_origin(tenancy, documents, settings):
    url = documents(DOCUMENT)
    settings.OAUTH_CIMD_ALLOW_ORIGINS = []  # the server on loopback is no reason to fetch there
    settings.PUBLIC_URL = "http://127.0.0.1:8000"
    assert consent_page(tenancy, url).status_code == 400
    assert not Application.objects.exists()


@pytest.mark.parametrize("path", ["/oauth/token/", "/oauth/revoke/", "/oauth/register/"])
def test_the_endpoints_clients_call_need_no_csrf_token(db, path):
    response = Client(enforce_csrf_checks=True).post(path, {"grant_type": "refresh_token"})
    assert response.status_code != 403, response.content


def test_the_consent_form_needs_its_csrf_token(tenancy):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(tenancy.owner)
    assert browser.post("/oauth/authorize/", {"allow": "on"}).status_code == 403
