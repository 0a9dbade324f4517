"""The account page: deleting the account with the password again (the service DELETE
/api/v1/me calls), keeping or taking what the person wrote in shared scopes."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from memories.models import Memory, Provenance
from scopes.models import Role, Scope
from tests.dashboard.conftest import remember
from tests.factories import UserFactory, add_member

PASSWORD = "correct horse battery"  # noqa: S105 - the factories' password
User = get_user_model()


def test_the_account_page_offers_deletion(tenancy, login):
    page = login(tenancy.writer).get("/account/")
    body = page.content.decode()
    assert page.status_code == 200
    assert "Delete my account" in body and 'action="/account/delete/"' in body
    assert 'name="delete_shared_writes"' in body and 'type="password"' in body
    assert 'href="/account/"' in body  # the top bar links to it


def test_a_wrong_password_or_no_confirmation_deletes_nothing(tenancy, login):
    client = login(tenancy.writer)
    wrong = client.post("/account/delete/", {"password": "nope", "confirm": "on"})
    assert wrong.status_code == 422
    assert "This is not the account&#x27;s password." in wrong.content.decode()
    unconfirmed = client.post("/account/delete/", {"password": PASSWORD})
    assert unconfirmed.status_code == 422
    assert User.objects.filter(pk=tenancy.writer.pk).exists()


def test_the_sole_admin_of_a_shared_scope_is_told_which_to_hand_over(tenancy, login):
    response = login(tenancy.owner).post(
        "/account/delete/", {"password": PASSWORD, "confirm": "on"}
    )
    assert response.status_code == 409
    body = response.content.decode()
    assert f"Team ({tenancy.team.public_id})" in body
    assert User.objects.filter(pk=tenancy.owner.pk).exists()


def test_deleting_the_account_ends_the_session_and_keeps_team_memories(tenancy, login):
    writer = tenancy.writer
    shared = remember(writer, "The team deploys with Helm.", scope=tenancy.team)
    personal = remember(writer, "I keep my notes in Obsidian.")
    client = login(writer)
    response = client.post("/account/delete/", {"password": PASSWORD, "confirm": "on"})
    assert response.status_code == 302 and response["Location"] == "/login/"
    assert not User.objects.filter(pk=writer.pk).exists()
    assert not Memory.objects.filter(pk=personal.pk).exists()
    assert not Scope.objects.filter(owner_id=writer.pk).exists()
    assert Provenance.objects.get(memory=shared).author_name == "a deleted user"
    landing = client.get("/login/").content.decode()
    assert "Your account was deleted." in landing
    assert client.get("/").status_code == 302  # signed out


def test_deleting_the_account_can_take_shared_writes_along(tenancy, login):
    user = UserFactory(username="leaver")
    add_member(tenancy.team, user, Role.WRITER)
    shared = remember(user, "The team deploys with Helm.", scope=tenancy.team)
    response = login(user, "de").post(
        "/account/delete/",
        {"password": PASSWORD, "confirm": "on", "delete_shared_writes": "on"},
        follow=True,
    )
    assert response.status_code == 200
    assert "Ihr Konto wurde gelöscht." in response.content.decode()
    assert not Memory.objects.filter(pk=shared.pk).exists()
