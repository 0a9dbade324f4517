"""The MCP prompts and resources against every kind of caller of the tenancy matrix (its world
and actors; the tool rows' expectations, since a prompt or resource reads what a tool reads):
a caller outside the team gets the same not_found as for a missing thing, and no successful
answer to it shows the team's ids or words."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp_inproc import prompt_or_read
from tests.security.surfaces import ACTORS, BLIND, OK
from tests.security.surfaces_tools import TOOL_ACCOUNT, TOOL_ADMIN, TOOL_READ
from tests.security.world import world_fixtures

# (label, prompt or None, arguments or uri, expectations by actor)
ROWS: list[tuple[str, str | None, Any, dict[str, str]]] = [
    ("brief-team", "brief", {"task": "vault word", "scope": "{team}"}, TOOL_READ),
    ("brief-all", "brief", {"task": "vault word"}, TOOL_ACCOUNT),
    ("triage-team", "triage", {"scope": "{team}"}, TOOL_ADMIN),
    ("triage-all", "triage", {}, TOOL_ACCOUNT),
    ("receipt", "receipt", {"conversation_id": "conversation-1"}, TOOL_ACCOUNT),
    ("memory", None, "zm://memory/{memory}", TOOL_READ),
    ("scope", None, "zm://scope/{team}", TOOL_READ),
    ("rules", None, "zm://rules", TOOL_ACCOUNT),
]


shared_world, world = world_fixtures()


@pytest.mark.parametrize(
    ("label", "prompt", "target", "expected", "actor"),
    [pytest.param(*row, actor, id=f"{row[0]}-{actor}") for row in ROWS for actor in ACTORS],
)
def test_prompt_or_resource(world, label, prompt, target, expected, actor):
    sent = world.fill(target)
    if prompt is not None:
        text, refused = prompt_or_read(world.secrets[actor], prompt=prompt, arguments=sent)
    else:
        text, refused = prompt_or_read(world.secrets[actor], uri=sent)
    wanted = expected[actor]
    if wanted == OK:
        assert refused is None and text, refused
        if actor in BLIND:
            assert not world.leaks(text, str(sent)), f"{actor} saw {world.leaks(text, str(sent))}"
    else:
        assert text is None and refused["code"] == wanted, (text, refused)
