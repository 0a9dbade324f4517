"""The MCP resource `zm://rules` and the rules in the MCP instructions against every kind of
caller of the tenancy table (its tools and routes have rows there): the team's approved rule
reaches its members' credentials and no other, and a revoked token reads nothing."""

from __future__ import annotations

import traceback

import pytest

from tests.mcp_inproc import opened
from tests.security.surfaces import ACTORS, BLIND
from tests.security.world import MARKER, build_world


@pytest.fixture
def world(db, kinds_seeded):
    return build_world()


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
