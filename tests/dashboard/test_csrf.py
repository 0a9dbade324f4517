"""Every form of the dashboard is protected against cross-site request forgery."""

from __future__ import annotations

import pytest
from django.test import Client

from memories.models import Memory
from scopes.models import Membership, Scope
from scopes.services import token_create
from zeromemory.core.actor import Actor


@pytest.fixture
def forged(tenancy):
    """A client signed in as the owner that sends no CSRF token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(tenancy.owner)
    return client


def test_every_form_refuses_a_post_without_the_csrf_token(tenancy, memories, forged):
    token = token_create(actor=Actor(user=tenancy.owner), name="t").token
    memory, scope = memories.team.public_id, tenancy.team.public_id
    posts = {
        "/remember/": {"content": "forged", "kind": "fact", "scope": scope},
        f"/memories/{memory}/edit/": {"content": "forged", "kind": "fact"},
        f"/memories/{memory}/forget/": {"reason": "forged"},
        f"/memories/{memory}/restore/": {},
        "/scopes/": {"name": "Forged", "slug": "forged", "kind": "team"},
        f"/scopes/{scope}/rename/": {"name": "Forged", "slug": "forged"},
        f"/scopes/{scope}/delete/": {},
        f"/scopes/{scope}/leave/": {},
        f"/scopes/{scope}/members/": {"username": "outsider", "role": "30"},
        f"/scopes/{scope}/members/reader/role/": {"role": "30"},
        f"/scopes/{scope}/members/reader/remove/": {},
        "/tokens/": {"name": "forged"},
        f"/tokens/{token.public_id}/revoke/": {},
        "/password/": {"old_password": "x", "new_password1": "y", "new_password2": "y"},
        "/language/": {"language": "de"},
        "/logout/": {},
    }
    for url, data in posts.items():
        assert forged.post(url, data).status_code == 403, url
    assert Memory.objects.get(public_id=memory).content == "Releases are cut on Tuesdays."
    assert not Memory.objects.filter(content="forged").exists()
    assert Scope.objects.get(public_id=scope).name == "Team"
    assert Membership.objects.filter(scope__public_id=scope).count() == 3
    token.refresh_from_db()
    assert token.revoked_at is None


def test_login_and_signup_need_the_csrf_token_too(db):
    client = Client(enforce_csrf_checks=True)
    assert client.post("/login/", {"username": "a", "password": "b"}).status_code == 403
    assert client.post("/signup/", {"username": "a"}).status_code == 403


def test_every_page_form_carries_the_csrf_token(tenancy, memories, login):
    client = login(tenancy.owner)
    for url in [
        "/",
        "/remember/",
        f"/memories/{memories.team.public_id}/",
        "/scopes/",
        f"/scopes/{tenancy.team.public_id}/",
        "/tokens/",
        "/password/",
    ]:
        body = client.get(url).content.decode()
        post_forms = body.count('method="post"')
        assert post_forms and body.count("csrfmiddlewaretoken") == post_forms, url
