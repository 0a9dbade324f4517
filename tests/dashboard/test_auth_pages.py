"""Login, logout and the placeholder home page."""

from __future__ import annotations

from tests.factories import UserFactory


def test_home_requires_login(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_login_page_renders(client, db):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b"csrfmiddlewaretoken" in response.content


def test_login_home_logout(client, db):
    UserFactory(username="ada")
    bad = client.post("/login/", {"username": "ada", "password": "wrong"})
    assert bad.status_code == 200 and b"errors" in bad.content
    response = client.post("/login/", {"username": "ada", "password": "correct horse battery"})
    assert response.status_code == 302
    home = client.get("/")
    assert home.status_code == 200
    assert b"personal" in home.content
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_home_shows_only_own_scopes(client, tenancy):
    client.force_login(tenancy.outsider)
    body = client.get("/").content.decode()
    assert "Team" not in body
    client.force_login(tenancy.reader)
    assert "Team" in client.get("/").content.decode()
