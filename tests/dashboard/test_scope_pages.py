"""Scopes: the list with roles, creating, renaming, deleting, members and roles, leaving."""

from __future__ import annotations

import pytest

from scopes.models import Membership, Role, Scope
from tests.dashboard.conftest import HTMX
from tests.factories import UserFactory


def test_the_list_shows_the_scopes_with_my_role(tenancy, login):
    body = login(tenancy.reader).get("/scopes/").content.decode()
    assert ">Team</a>" in body and "role-reader" in body
    outsider = login(tenancy.outsider).get("/scopes/").content.decode()
    assert ">Team</a>" not in outsider and ">Personal</a>" in outsider


def test_create_a_team_scope(tenancy, login):
    client = login(tenancy.outsider)
    response = client.post("/scopes/", {"name": "Platform", "slug": "platform", "kind": "team"})
    scope = Scope.objects.get(owner=tenancy.outsider, slug="platform")
    assert response.status_code == 302 and response["Location"] == f"/scopes/{scope.public_id}/"
    assert Membership.objects.get(scope=scope).role == Role.ADMIN


def test_create_errors_in_the_users_language(tenancy, login):
    client = login(tenancy.owner, "de")
    bad_slug = client.post("/scopes/", {"name": "X", "slug": "Not A Slug", "kind": "team"})
    assert bad_slug.status_code == 422
    assert "Kleinbuchstaben" in bad_slug.content.decode()
    taken = client.post("/scopes/", {"name": "Team again", "slug": "team", "kind": "project"})
    assert taken.status_code == 422
    assert "team" in taken.content.decode() and "Sie besitzen bereits" in taken.content.decode()
    personal = client.post("/scopes/", {"name": "P", "slug": "p2", "kind": "personal"})
    assert personal.status_code == 422
    assert Scope.objects.filter(owner=tenancy.owner).count() == 2


SCOPE_POSTS = [
    ("rename/", {"name": "Renamed", "slug": "renamed"}),
    ("delete/", {}),
    ("members/", {"username": "outsider", "role": "20"}),
    ("members/reader/role/", {"role": "30"}),
    ("members/reader/remove/", {}),
]


@pytest.mark.parametrize("suffix", ["", "leave/", *[s for s, _ in SCOPE_POSTS]])
def test_an_outsider_gets_404(tenancy, login, suffix):
    client = login(tenancy.outsider)
    data = dict(SCOPE_POSTS).get(suffix, {})
    method = client.get if suffix == "" else client.post
    assert method(f"/scopes/{tenancy.team.public_id}/{suffix}", data).status_code == 404
    assert method(f"/scopes/scp_missing/{suffix}", data).status_code == 404
    assert Membership.objects.filter(scope=tenancy.team).count() == 3
    assert Scope.objects.get(pk=tenancy.team.pk).name == "Team"


@pytest.mark.parametrize(("suffix", "data"), SCOPE_POSTS)
def test_a_reader_or_writer_cannot_administer(tenancy, login, suffix, data):
    for user in (tenancy.reader, tenancy.writer):
        response = login(user).post(f"/scopes/{tenancy.team.public_id}/{suffix}", data)
        assert response.status_code == 403
    assert Membership.objects.get(scope=tenancy.team, user=tenancy.reader).role == Role.READER
    assert Scope.objects.get(pk=tenancy.team.pk).name == "Team"


def test_a_non_admin_sees_no_member_management(tenancy, login):
    page = login(tenancy.writer).get(f"/scopes/{tenancy.team.public_id}/").content.decode()
    assert 'id="members"' not in page and "/leave/" in page
    admin = login(tenancy.owner).get(f"/scopes/{tenancy.team.public_id}/").content.decode()
    assert 'id="members"' in admin and "member-reader" in admin


def test_an_admin_adds_changes_and_removes_a_member(tenancy, login):
    client = login(tenancy.owner)
    base = f"/scopes/{tenancy.team.public_id}/members/"
    added = client.post(
        base, {"username": "outsider", "role": str(Role.WRITER.value)}, headers=HTMX
    )
    assert added.status_code == 200
    assert added.content.decode().lstrip().startswith('<section class="card" id="members">')
    assert Membership.objects.get(scope=tenancy.team, user=tenancy.outsider).role == Role.WRITER
    changed = client.post(base + "outsider/role/", {"role": str(Role.ADMIN.value)})
    assert changed.status_code == 302
    assert Membership.objects.get(scope=tenancy.team, user=tenancy.outsider).role == Role.ADMIN
    assert client.post(base + "outsider/remove/").status_code == 302
    assert not Membership.objects.filter(scope=tenancy.team, user=tenancy.outsider).exists()


def test_member_errors(tenancy, login):
    client = login(tenancy.owner, "fr")
    base = f"/scopes/{tenancy.team.public_id}/members/"
    unknown = client.post(base, {"username": "nobody", "role": "20"}, headers=HTMX)
    assert unknown.status_code == 422 and "nobody" in unknown.content.decode()
    twice = client.post(base, {"username": "reader", "role": "20"})
    assert twice.status_code == 422 and "déjà membre" in twice.content.decode()
    bad_role = client.post(base, {"username": "outsider", "role": "99"})
    assert bad_role.status_code == 422
    last_admin = client.post(base + "owner/role/", {"role": "10"}, headers=HTMX)
    assert last_admin.status_code == 422
    assert "dernier admin" in last_admin.content.decode()
    assert client.post(base + "ghost/role/", {"role": "10"}).status_code == 404
    assert Membership.objects.get(scope=tenancy.team, user=tenancy.owner).role == Role.ADMIN


def test_leave(tenancy, login):
    response = login(tenancy.writer).post(f"/scopes/{tenancy.team.public_id}/leave/")
    assert response.status_code == 302 and response["Location"] == "/scopes/"
    assert not Membership.objects.filter(scope=tenancy.team, user=tenancy.writer).exists()
    last = login(tenancy.owner).post(f"/scopes/{tenancy.team.public_id}/leave/", follow=True)
    assert "The last admin cannot leave" in last.content.decode()
    assert Membership.objects.filter(scope=tenancy.team, user=tenancy.owner).exists()


def test_rename_and_delete(tenancy, login):
    client = login(tenancy.owner)
    scope_url = f"/scopes/{tenancy.team.public_id}/"
    assert client.post(scope_url + "rename/", {"name": "Core", "slug": "core"}).status_code == 302
    assert Scope.objects.get(pk=tenancy.team.pk).slug == "core"
    bad = client.post(scope_url + "rename/", {"name": "Core", "slug": "Bad Slug"})
    assert bad.status_code == 422
    empty = UserFactory(username="solo")
    from tests.factories import make_scope

    scope = make_scope(owner=empty, slug="temp")
    response = login(empty).post(f"/scopes/{scope.public_id}/delete/")
    assert response.status_code == 302 and not Scope.objects.filter(pk=scope.pk).exists()
