"""The MCP resource `zm://rules` and the rules in the MCP instructions against every kind of
caller of the tenancy table (its tools and routes have rows there): the team's approved rule
reaches its members' credentials and no other, and a revoked token reads nothing. The REST rows
that only a person may send (approving and moving rules) against every signed-in caller."""

from __future__ import annotations

import traceback

import pytest
from rest_framework.test import APIClient

from tests.mcp_inproc import opened
from tests.security.surfaces import ACTORS, API_ROWS, BLIND, OK, SESSION_EXPECT
from tests.security.world import MARKER, answer_text, world_fixtures

shared_world, world = world_fixtures()


@pytest.mark.parametrize("actor", ACTORS)
def test_the_rules_resource_and_instructions(world, actor):
    if actor == "revoked":
        with pytest.raises(BaseException) as raised:  # the SDK's task group wraps the error
            opened(world.secrets[actor], "zm://rules")
        assert "unauthorized" in "".join(traceback.format_exception(raised.value))
        return
    instructions, listed = opened(world.secrets[actor], "zm://rules")
    text = (instructions or "") + listed
    if actor in BLIND:
        assert not world.leaks(text), world.leaks(text)
    else:
        assert MARKER in listed and world.ids["rule"] in listed
        assert MARKER in instructions


PERSON_ROWS = [row for row in API_ROWS if row.extra.get("session")]


def test_the_rules_routes_only_a_person_may_send_are_marked():
    assert {row.route for row in PERSON_ROWS} == {"api-rule-approve", "api-rule-move"}


@pytest.mark.parametrize("row", PERSON_ROWS, ids=lambda row: row.id)
@pytest.mark.parametrize("actor", sorted(SESSION_EXPECT))
def test_a_person_in_a_fresh_session(world, row, actor):
    client = APIClient()
    client.force_login(world.users[actor])
    response = client.post(world.fill(row.path), world.fill(row.body), format="json")
    wanted = SESSION_EXPECT[actor]
    if wanted == OK:
        assert response.status_code == 200, response.content
    else:
        assert response.status_code == wanted, response.content
        assert response.json()["error"]["code"] in ("forbidden", "not_found")
    if actor in BLIND:
        assert not world.leaks(answer_text(response), world.fill(row.path))
