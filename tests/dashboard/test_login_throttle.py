"""Sign-in throttling (django-axes): lockout per username and per address, unlock in the admin."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.test import Client, override_settings

from tests.factories import UserFactory

PASSWORD = "correct horse battery"


def sign_in(client: Client, username: str, password: str, ip: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


@override_settings(AXES_FAILURE_LIMIT=3)
def test_a_username_is_locked_after_repeated_failures_from_any_address(db):
    UserFactory(username="alice")
    for n in range(2):
        assert sign_in(Client(), "alice", "wrong", ip=f"10.0.0.{n}").status_code == 200
    # The failure that reaches the limit already answers the lockout.
    assert sign_in(Client(), "alice", "wrong", ip="10.0.0.3").status_code == 429
    locked = sign_in(Client(), "alice", PASSWORD, ip="10.9.9.9")
    assert locked.status_code == 429
    assert "locked for 15 minutes" in locked.content.decode()


@override_settings(AXES_FAILURE_LIMIT=3)
def test_an_address_is_locked_after_failures_on_many_usernames(db):
    UserFactory(username="bob")
    for name in ("x1", "x2", "x3"):
        sign_in(Client(), name, "wrong", ip="10.1.1.1")
    assert sign_in(Client(), "bob", PASSWORD, ip="10.1.1.1").status_code == 429
    assert sign_in(Client(), "bob", PASSWORD, ip="10.2.2.2").status_code == 302


@override_settings(AXES_FAILURE_LIMIT=3)
def test_staff_unlock_from_the_admin(db):
    UserFactory(username="carol")
    for _ in range(3):
        sign_in(Client(), "carol", "wrong")
    assert sign_in(Client(), "carol", PASSWORD).status_code == 429
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)
    admin = Client()
    admin.force_login(staff)
    page = admin.get("/admin/axes/accessattempt/")
    assert page.status_code == 200 and "carol" in page.content.decode()
    ids = [str(pk) for pk in AccessAttempt.objects.values_list("pk", flat=True)]
    answer = admin.post(
        "/admin/axes/accessattempt/",
        {"action": "delete_selected", "_selected_action": ids, "post": "yes"},
    )
    assert answer.status_code == 302
    assert sign_in(Client(), "carol", PASSWORD).status_code == 302


@pytest.mark.parametrize("lang", ["de", "es", "fr", "ja"])
@override_settings(AXES_FAILURE_LIMIT=1)
def test_the_lockout_message_is_translated(db, lang):
    UserFactory(username="dora")
    sign_in(Client(), "dora", "wrong")
    client = Client(HTTP_ACCEPT_LANGUAGE=lang)
    body = sign_in(client, "dora", PASSWORD).content.decode()
    assert "Too many failed sign-ins" not in body
    assert "15" in body
