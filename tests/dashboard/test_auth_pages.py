"""Sign in, sign out, sign up (and turning it off), password change, the language switcher."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from scopes.models import Scope
from tests.factories import UserFactory


@pytest.mark.parametrize(
    "path", ["/", "/remember/", "/scopes/", "/activity/", "/tokens/", "/password/"]
)
def test_pages_require_sign_in(client, db, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_login_page_renders(client, db):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b"csrfmiddlewaretoken" in response.content
    assert b'href="/signup/"' in response.content


def test_login_home_logout(client, db):
    UserFactory(username="ada")
    bad = client.post("/login/", {"username": "ada", "password": "wrong"})
    assert bad.status_code == 200 and b'class="errors"' in bad.content
    response = client.post("/login/", {"username": "ada", "password": "correct horse battery"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_login_errors_are_in_the_users_language(db):
    UserFactory(username="ada")
    client = Client(headers={"Accept-Language": "de"})
    response = client.post("/login/", {"username": "ada", "password": "wrong"})
    assert "Beide Felder berücksichtigen die Groß-/Kleinschreibung." in response.content.decode()


def test_signup_creates_the_account_with_a_personal_scope_and_signs_in(client, db):
    response = client.post(
        "/signup/",
        {
            "username": "newbie",
            "password1": "a long pass phrase 42",
            "password2": "a long pass phrase 42",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/"
    user = get_user_model().objects.get(username="newbie")
    assert Scope.objects.filter(owner=user, kind="personal").exists()
    assert client.get("/").status_code == 200


def test_signup_errors_name_the_field_in_the_users_language(db):
    client = Client(headers={"Accept-Language": "fr"})
    response = client.post("/signup/", {"username": "x", "password1": "abc", "password2": "abd"})
    assert response.status_code == 422
    body = response.content.decode()
    assert "Les deux mots de passe ne correspondent pas." in body
    assert not get_user_model().objects.filter(username="x").exists()


@override_settings(SIGNUP_ENABLED=False)
def test_signup_can_be_turned_off(client, db):
    assert client.get("/signup/").status_code == 404
    response = client.post(
        "/signup/", {"username": "n", "password1": "a long pass 42", "password2": "a long pass 42"}
    )
    assert response.status_code == 404
    assert not get_user_model().objects.filter(username="n").exists()
    assert b'href="/signup/"' not in client.get("/login/").content


def test_password_change(client, db):
    user = UserFactory(username="ada")
    client.force_login(user)
    assert client.get("/password/").status_code == 200
    response = client.post(
        "/password/",
        {
            "old_password": "correct horse battery",
            "new_password1": "another long phrase 7",
            "new_password2": "another long phrase 7",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("another long phrase 7")


def test_the_page_follows_accept_language(client, db):
    client.force_login(UserFactory())
    for lang, heading in [("de", "Erinnerungen"), ("ja", "メモリー"), ("es", "Memorias")]:
        body = client.get("/", headers={"Accept-Language": lang}).content.decode()
        assert f'<html lang="{lang}">' in body
        assert f"<h1>{heading}</h1>" in body


def test_the_language_switcher_overrides_accept_language(db):
    client = Client(headers={"Accept-Language": "de"})
    client.force_login(UserFactory())
    response = client.post("/language/", {"language": "fr", "next": "/scopes/"})
    assert response.status_code == 302 and response["Location"] == "/scopes/"
    assert '<html lang="fr">' in client.get("/scopes/").content.decode()
