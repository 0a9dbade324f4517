"""The consent page and the connect instructions, in every language of the dashboard."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from tests.oauth.flow import REDIRECT, register

WORDS = {
    "en": "Connect an agent",
    "de": "Einen Agenten verbinden",
    "es": "Conectar un agente",
    "fr": "Connecter un agent",
    "ja": "エージェントを接続",
}


@pytest.mark.parametrize("lang", WORDS)
def test_the_empty_home_and_the_tokens_page_say_how_to_connect(tenancy, lang, kinds_seeded):
    browser = Client(HTTP_ACCEPT_LANGUAGE=lang)
    browser.force_login(tenancy.outsider)
    for path in ("/", "/tokens/"):
        page = browser.get(path).content.decode()
        assert WORDS[lang] in page
        assert f"claude mcp add --transport http zero-memory {settings.PUBLIC_URL}/mcp" in page
        assert 'data-copy="connect-claude"' in page


@pytest.mark.parametrize("lang", ["de", "ja"])
def test_the_consent_page_is_translated(tenancy, lang):
    client_id = register(client_name="Helper")["client_id"]
    browser = Client(HTTP_ACCEPT_LANGUAGE=lang)
    browser.force_login(tenancy.owner)
    page = browser.get(
        "/oauth/authorize/",
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": "a" * 43,
            "code_challenge_method": "S256",
            "scope": "memories:read memories:write",
        },
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert {"de": "„Helper“ verbinden", "ja": "「Helper」を接続"}[lang] in text
    assert "127.0.0.1:33418" in text and tenancy.team.name in text


def test_a_signed_out_person_is_sent_to_sign_in(db):
    client_id = register()["client_id"]
    page = Client().get("/oauth/authorize/", {"client_id": client_id, "response_type": "code"})
    assert page.status_code == 302 and page["Location"].startswith("/login/")
