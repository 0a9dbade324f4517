"""The bad-input matrix's rows for `as_of` (recall, context, briefing over REST and MCP): far
past and future instants, instants without a time zone, malformed ones; each answers 400 naming
`as_of`. A valid instant with any offset is taken."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import pytest

from memories.hygiene.scan import hygiene_scan
from memories.insights.fold import insights_fold
from memories.models import Memory, MemoryKind, MemoryVersion, UsageCounter, ValidityPeriod
from memories.services.lifecycle import memory_forget
from memories.services.remember import RememberInput, memory_remember
from tests.mcp_inproc import call_tool, structured
from tests.security.surfaces import API_ROWS, Row
from tests.security.surfaces_pages import DASHBOARD_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.test_bad_input_matrix import named, rolled_back, send
from tests.security.world import world_fixtures
from zeromemory.core.actor import Actor

shared_world, world = world_fixtures()


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


# Instants a memory may hold (planted as an older import or a restore could have left them):
# the bounds Python and Django represent, the epoch, and the far future.
STORED_INSTANTS = {
    "year 1": datetime(1, 1, 1, tzinfo=UTC),
    "1970": datetime(1970, 1, 1, tzinfo=UTC),
    "year 9999": datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
}
# Read rows as the owner sends them: recall, context, briefing (now and as_of, one scope and
# all of them), history, insights and every other GET; the read tools; the dashboard's pages.
READ_ROUTES = {"api-recall", "api-context"}
# The reads that must answer 200 (the other GETs only must not fail: some answer 404 here).
ANSWER_ROUTES = READ_ROUTES | {"api-briefing", "api-history", "api-insights", "api-activity"}
STORED_ROWS = [row for row in API_ROWS if row.method == "get" or row.route in READ_ROUTES]
READ_TOOLS = {"recall", "build_context", "briefing", "history", "session_receipt"}
STORED_TOOL_ROWS = [row for row in TOOL_ROWS if row.route in READ_TOOLS]
STORED_PAGE_ROWS = [row for row in DASHBOARD_ROWS if row.method == "get"]


def plant_instants(world, instant: datetime) -> None:
    """Memories of the team (kinds with short half-lives, matching the rows' queries), each with
    `instant` in a column of its own: created, valid from (always valid, and valid once until
    then), confirmed, last recalled, an edit's version, a usage row's last use."""
    owner = Actor(user=world.users["owner"])
    team = world.team.public_id
    planted = []
    for kind in ("task", "open_question", "episode", "fact"):
        for n in range(3):
            request = RememberInput(
                content=f"The vault word check {kind} {n} runs at the door.", kind=kind, scope=team
            )
            planted.append(memory_remember(actor=owner, request=request).memory)
    columns = {"created_at", "valid_from", "confirmed_at", "last_recalled_at"}
    for memory in planted:
        Memory.objects.filter(pk=memory.pk).update(**dict.fromkeys(columns, instant))
        ValidityPeriod.objects.filter(memory=memory).update(valid_from=instant)
        MemoryVersion.objects.create(
            memory=memory, number=1, kind_id=memory.kind_id, content="Before.", created_at=instant
        )
        UsageCounter.objects.update_or_create(
            memory=memory, defaults={"uses": 2**31 - 1, "last_used_at": instant}
        )
    # A half-life staff set at its column's bound: no instant is that many days before now.
    MemoryKind.objects.filter(slug="fact").update(half_life_days=2**31 - 1)
    ended = planted[-1]  # valid from the instant until a moment later, then forgotten
    memory_forget(actor=owner, memory=ended, reason="Planted.")
    until = instant + timedelta(seconds=1) if instant.year < 9999 else instant
    Memory.objects.filter(pk=ended.pk).update(valid_from=instant, valid_until=until)
    ValidityPeriod.objects.filter(memory=ended).update(valid_from=instant, valid_until=until)


@pytest.mark.parametrize("instant", STORED_INSTANTS.values(), ids=STORED_INSTANTS)
def test_reads_answer_whatever_instant_a_memory_holds(world, instant):
    plant_instants(world, instant)
    hygiene_scan()  # the background passes read the planted rows too
    insights_fold()
    api, browser = world.api("owner"), world.browser("owner")
    api.raise_request_exception = browser.raise_request_exception = False
    problems = []
    for row in STORED_ROWS:
        with rolled_back():
            body = row.body and world.fill(row.body)
            response = getattr(api, row.method)(world.fill(row.path), body, format="json")
        if response.status_code >= 500 or (
            row.route in ANSWER_ROUTES and response.status_code != 200
        ):
            problems.append((row.route, row.path, response.status_code))
    for row in STORED_TOOL_ROWS:
        with rolled_back():
            result = call_tool(world.secrets["owner"], row.route, world.fill(row.body))
        if result.is_error:
            problems.append((row.route, row.body, str(result.content)[:200]))
    for row in STORED_PAGE_ROWS:
        with rolled_back():
            response = browser.get(world.fill(row.path))
        if response.status_code >= 500:
            problems.append((row.route, row.path, response.status_code))
    assert not problems, problems
