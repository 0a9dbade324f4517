"""describe_scope and export_metrics (MCP) and GET /api/v1/scopes/{id}/overview: what a scope
holds, members only for its admins; a scope's insights as numbers, the insights route's answer."""

from __future__ import annotations

from django.utils import timezone

from memories.models import Conflict, ConflictStatus, Memory, Rule, RuleStatus
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured
from tests.memories.insights.support import seed
from tests.memories.mcp_support import remember_directly


def _overview_world(tenancy):
    team = tenancy.team.public_id
    ids = [
        remember_directly(tenancy.owner, "Releases ship on Mondays.", team, kind="decision"),
        remember_directly(
            tenancy.owner, "Use uv to install Python tools.", team, kind="convention"
        ),
        remember_directly(
            tenancy.writer, "The billing service runs on port 8443.", team, kind="fact"
        ),
        remember_directly(tenancy.writer, "Never restart the queue at noon.", team, kind="gotcha"),
    ]
    memories = {m.public_id: m for m in Memory.objects.filter(public_id__in=ids)}
    Memory.objects.filter(public_id=ids[2]).update(recall_count=7)
    Memory.objects.filter(public_id=ids[0]).update(recall_count=2)
    retired = remember_directly(tenancy.owner, "Releases ship on Fridays.", team, kind="decision")
    Memory.objects.filter(public_id=retired).update(valid_until=timezone.now())
    rule = Rule.objects.create(
        scope=tenancy.team,
        memory=memories[ids[1]],
        text="Install Python tools with uv.",
        status=RuleStatus.APPROVED,
        position=1,
    )
    Conflict.objects.create(
        scope=tenancy.team,
        memory_a=memories[ids[0]],
        memory_b=memories[ids[3]],
        status=ConflictStatus.OPEN,
    )
    return ids, rule


def test_describe_scope_tells_what_the_scope_holds_and_members_only_to_admins(
    tenancy, kinds_seeded
):
    ids, rule = _overview_world(tenancy)
    team = tenancy.team.public_id
    result = call_tool(make_token(tenancy.owner), "describe_scope", {"scope": team})
    assert not result.is_error, structured(result)
    answer = structured(result)
    assert (answer["scope"], answer["role"], answer["kind"]) == (team, "admin", "team")
    assert (answer["memories"], answer["retired"], answer["review_open"]) == (4, 1, 1)
    assert {row["kind"]: row["count"] for row in answer["kinds"]} == {
        "decision": 1,
        "convention": 1,
        "fact": 1,
        "gotcha": 1,
    }
    assert [line["id"] for line in answer["newest"]] == ids[::-1]
    assert [(line["id"], line["times"]) for line in answer["most_recalled"]] == [
        (ids[2], 7),
        (ids[0], 2),
    ]
    assert answer["rules"] == [
        {"id": rule.public_id, "text": "Install Python tools with uv.", "memory_id": ids[1]}
    ]
    assert {(m["username"], m["role"]) for m in answer["members"]} == {
        ("owner", "admin"),
        ("writer", "writer"),
        ("reader", "reader"),
    }

    as_reader = structured(call_tool(make_token(tenancy.reader), "describe_scope", {"scope": team}))
    assert as_reader["members"] is None and as_reader["role"] == "reader"
    assert {k: v for k, v in as_reader.items() if k not in ("members", "role")} == {
        k: v for k, v in answer.items() if k not in ("members", "role")
    }
    # A read-only token of the admin reads the scope but does not administer it: no members.
    read_only = make_token(tenancy.owner, read_only=True)
    assert structured(call_tool(read_only, "describe_scope", {"scope": team}))["members"] is None


def test_describe_scope_over_rest_and_refusals(tenancy, kinds_seeded, api):
    _overview_world(tenancy)
    team = tenancy.team.public_id
    rest = api(tenancy.owner).get(f"/api/v1/scopes/{team}/overview")
    assert rest.status_code == 200
    mcp = structured(call_tool(make_token(tenancy.owner), "describe_scope", {"scope": team}))
    assert rest.json() == mcp
    outsider = api(tenancy.outsider).get(f"/api/v1/scopes/{team}/overview")
    assert outsider.status_code == 404 and outsider.json()["error"]["code"] == "not_found"
    refused = call_tool(make_token(tenancy.outsider), "describe_scope", {"scope": team})
    assert refused.is_error and structured(refused)["error"]["details"] == {
        "scope": [structured(refused)["error"]["message"]]
    }


def test_export_metrics_is_the_insights_answer(tenancy, kinds_seeded, api):
    seed(tenancy)
    team = tenancy.team.public_id
    for days in (7, 30, 90):
        rest = api(tenancy.reader).get("/api/v1/insights", {"scope": team, "days": days}).json()
        mcp = call_tool(make_token(tenancy.reader), "export_metrics", {"scope": team, "days": days})
        assert not mcp.is_error and structured(mcp) == rest
    default = structured(call_tool(make_token(tenancy.owner), "export_metrics", {"scope": team}))
    assert default["days"] == 30 and default["value"]["recalls"] > 0
    bad = call_tool(make_token(tenancy.owner), "export_metrics", {"scope": team, "days": 14})
    assert bad.is_error and structured(bad)["error"]["code"] == "validation_failed"
    assert "days" in structured(bad)["error"]["details"]
    foreign = call_tool(make_token(tenancy.outsider), "export_metrics", {"scope": team})
    assert structured(foreign)["error"]["code"] == "not_found"
