"""`access.readable_scope_ids` (recall's one statement for the readable scopes) and
`access.readable_scope_with_role` (every write's scope and role, one statement) answer exactly
what `access.readable_scopes` answers, whoever asks: they state one rule and must not drift."""

from __future__ import annotations

import time

from django.utils import timezone

from scopes import access
from scopes.models import Role
from scopes.services import token_create
from tests.factories import UserFactory, add_member, make_scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound


def _rows(actor: Actor, public_ids=None) -> list[tuple[str, int]]:
    scopes = access.readable_scopes(actor)
    if public_ids is not None:
        scopes = scopes.filter(public_id__in=public_ids)
    return list(scopes.values_list("public_id", "id"))


def _token(user, **options):
    signed_in = Actor(user=user, password_checked_at=time.time())
    return token_create(actor=signed_in, name="t", **options).token


def _world(tenancy):
    other = make_scope(owner=tenancy.outsider, slug="other")
    second = make_scope(owner=tenancy.owner, slug="second")
    add_member(second, tenancy.reader, Role.READER)
    restricted = _token(tenancy.reader, scopes=[tenancy.team], read_only=True)
    revoked = _token(tenancy.owner)
    revoked.revoked_at = timezone.now()
    revoked.save(update_fields=["revoked_at"])
    inactive = UserFactory(username="gone")
    add_member(tenancy.team, inactive, Role.READER)
    inactive.is_active = False
    inactive.save(update_fields=["is_active"])
    actors = [
        Actor(user=tenancy.owner),
        Actor(user=tenancy.reader),
        Actor(user=tenancy.outsider),
        Actor(user=tenancy.reader, token=restricted),
        Actor(user=tenancy.owner, token=revoked),
        Actor(user=inactive),
    ]
    asked = [tenancy.team.public_id, second.public_id, other.public_id, "scp_unknown"]
    return actors, asked


def _with_role(actor: Actor, public_id: str):
    found = access.readable_scopes_with_own_role(actor).filter(public_id=public_id).first()
    if found is None:
        return None
    return {
        **{field.attname: getattr(found, field.attname) for field in found._meta.concrete_fields},
        "my_role": found.my_role,
    }


def test_the_scope_with_its_role_is_what_the_queryset_answers(tenancy):
    actors, asked = _world(tenancy)
    answered = 0
    for actor in actors:
        for public_id in asked:
            expected = _with_role(actor, public_id)
            try:
                scope = access.readable_scope_with_role(actor, public_id)
            except NotFound:
                assert expected is None, (actor, public_id)
                continue
            answered += 1
            fields = scope._meta.concrete_fields
            got = {field.attname: getattr(scope, field.attname) for field in fields}
            assert {**got, "my_role": scope.my_role} == expected
            # The object is a saved row, as the ORM gives it.
            assert not scope._state.adding and scope.pk == expected["id"]
    assert answered == 6  # owner and reader: team, second; outsider: other; restricted: team


def test_the_statement_answers_what_the_queryset_answers(tenancy):
    actors, asked = _world(tenancy)
    for actor in actors:
        assert access.readable_scope_ids(actor) == _rows(actor)
        assert access.readable_scope_ids(actor, public_ids=asked) == _rows(actor, asked)
    # Each case above is one the rule tells apart.
    assert len(_rows(Actor(user=tenancy.reader))) == 3  # personal, team, second
    restricted, revoked, inactive = actors[3], actors[4], actors[5]
    assert _rows(restricted) == [(tenancy.team.public_id, tenancy.team.pk)]
    assert _rows(revoked) == []
    assert _rows(inactive) == []
