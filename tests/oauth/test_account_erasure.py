"""Deleting an account deletes the OAuth clients only that person signed in with (their name
and redirect URIs are what the person's agent chose); a client someone else still uses stays,
and so does one staff registered in the admin."""

from __future__ import annotations

from django.test import Client
from oauth2_provider.models import Application

from tests.factories import UserFactory
from tests.oauth.flow import REDIRECT, access_token, register

PASSWORD = "correct horse battery staple"  # noqa: S105 - a test account's password


def _signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def _delete(user) -> None:
    answer = _signed_in(user).delete(
        "/api/v1/me", {"password": PASSWORD}, content_type="application/json"
    )
    assert answer.status_code == 204, answer.content


def _personal(user) -> str:
    return user.owned_scopes.get(kind="personal").public_id


def test_a_client_goes_with_the_last_person_who_used_it(db):
    alice = UserFactory(username="alice", password=PASSWORD)
    bob = UserFactory(username="bob", password=PASSWORD)
    shared = register(client_name="Team laptop agent")["client_id"]
    own = register(client_name="alice's desktop")["client_id"]
    staff = Application.objects.create(
        name="Staff-registered agent",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
        skip_authorization=False,
    )
    for client_id in (shared, own, staff.client_id):
        access_token(_signed_in(alice), client_id, scopes=[_personal(alice)])
    access_token(_signed_in(bob), shared, scopes=[_personal(bob)])

    _delete(alice)
    remaining = set(Application.objects.values_list("client_id", flat=True))
    assert remaining == {shared, staff.client_id}

    _delete(bob)
    assert set(Application.objects.values_list("client_id", flat=True)) == {staff.client_id}
