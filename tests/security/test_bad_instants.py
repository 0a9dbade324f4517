"""The bad-input matrix's rows for `as_of` (recall, context, briefing over REST and MCP): far
past and future instants, instants without a time zone, malformed ones; each answers 400 naming
`as_of`. A valid instant with any offset is taken."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.mcp_inproc import call_tool, structured
from tests.security.surfaces import API_ROWS, Row
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.test_bad_input_matrix import named, rolled_back, send
from tests.security.world import build_world


@pytest.fixture
def world(db, kinds_seeded):
    return build_world()


# Instants `as_of` refuses: far past and future, no time zone, malformed; each names as_of.
BAD_INSTANTS = {
    "year 1": "0001-01-01T00:00:00Z",
    "before 2000": "1999-12-31T23:59:59Z",
    "year 1 east of UTC": "0001-01-01T00:00:00+14:00",
    "next year": "2999-01-01T00:00:00Z",
    "year 9999 west of UTC": "9999-12-31T23:59:59-14:00",
    "no time zone": "2026-01-01T12:00:00",
    "a date alone": "2026-01-01",
    "offset past 24 h": "2026-01-01T12:00:00+25:00",
    "month 13": "2026-13-01T00:00:00Z",
    "words": "yesterday",
    "epoch seconds": "1767225600",
    "tz name": "2026-01-01T12:00:00 Europe/Berlin",
}
AS_OF_ROWS = [row for row in API_ROWS + TOOL_ROWS if "as_of" in (row.body or {})]
AS_OF_ROWS += [row for row in API_ROWS if "as_of=" in row.path]


@pytest.mark.parametrize("row", AS_OF_ROWS, ids=lambda row: f"{row.id} {row.path}")
def test_as_of_refuses_bad_instants_naming_it(world, row: Row):
    problems = []
    for name, instant in BAD_INSTANTS.items():
        with rolled_back():
            if row.method == "call":
                arguments = dict(world.fill(row.body), as_of=instant)
                answer = structured(call_tool(world.secrets["owner"], row.route, arguments))
                error, status = answer.get("error"), 400 if "error" in answer else 200
            else:
                body = dict(world.fill(row.body), as_of=instant) if row.body else None
                path = world.fill(row.path.replace("{as_of}", "AS_OF"))
                path = path.replace("AS_OF", quote(instant))
                response = send(world, row, body, path=path)
                status = response.status_code
                error = response.json().get("error") if status != 200 else None
        if status != 400 or "as_of" not in named(error["details"]):
            problems.append((name, status, error))
    assert not problems, problems


def test_as_of_takes_any_offset_and_a_plus_lost_in_a_query_string(world):
    owner = world.api("owner")
    at = world.ids["as_of"]
    for instant in (at, at.replace("Z", "+00:00"), "2026-01-01T13:00:00+01:00"):
        body = {"query": "vault word", "as_of": instant}
        assert owner.post("/api/v1/recall", body, format="json").status_code == 200, instant
    unencoded = "2026-01-01T13:00:00 01:00"  # "+01:00" sent unencoded arrives as a space
    assert owner.get("/api/v1/briefing", {"as_of": unencoded}).status_code == 200
