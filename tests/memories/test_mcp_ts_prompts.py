"""The prompts and resources through the official TypeScript SDK (`tests/mcp_ts/harness.mjs`)
against a live server: each lists and answers, each refusal is a JSON-RPC error carrying the
error envelope (never content), and a recall's resource links pass the SDK's result checks.
The server runs in another process and sees only committed data, hence a transactional test."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memories.models import Conflict, ConflictStatus, Memory
from tests.factories import make_token
from tests.memories.mcp_support import remember_directly
from tests.memories.mcp_ts_support import run_harness

pytestmark = pytest.mark.django_db(transaction=True)

DEPLOYS = "Deploys go through the staging cluster."


def op(who: str, method: str, **params: Any) -> dict[str, Any]:
    """A step calling the TypeScript client's `method` with `params`, as `who`."""
    return {"as": who, "op": method, "params": params}


def code(outcome: dict[str, Any]) -> str:
    """The stable code of a refusal the SDK threw (an McpError with the envelope as data)."""
    assert outcome["outcome"] == "thrown", outcome
    assert "data" in outcome and outcome["data"], outcome
    error = outcome["data"]["error"]
    assert error["message"] and error["code"] in outcome["message"]
    return error["code"]


def test_prompts_and_resources_answer_and_refuse_through_the_typescript_sdk(
    web_url, tenancy, kinds_seeded
):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, DEPLOYS, team)
    memory = Memory.objects.get(public_id=memory_id)
    Conflict.objects.create(scope=tenancy.team, memory_a=memory, status=ConflictStatus.OPEN)
    tokens = {
        "owner": make_token(tenancy.owner),
        "reader": make_token(tenancy.reader),
        "outsider": make_token(tenancy.outsider),
    }
    brief = {"name": "brief", "arguments": {"task": "staging deploys", "scope": team}}
    plan = {
        "prompts": op("owner", "listPrompts"),
        "brief": op("owner", "getPrompt", **brief),
        "triage": op("owner", "getPrompt", name="triage", arguments={"scope": team}),
        "receipt": op("owner", "getPrompt", name="receipt", arguments={"conversation_id": "c"}),
        "resources": op("owner", "listResources"),
        "templates": op("owner", "listResourceTemplates"),
        "memory": op("owner", "readResource", uri=f"zm://memory/{memory_id}"),
        "scope": op("owner", "readResource", uri=f"zm://scope/{team}"),
        "rules": op("owner", "readResource", uri="zm://rules"),
        "recall": {"as": "owner", "tool": "recall", "arguments": {"query": "staging deploys"}},
        "outsider_memory": op("outsider", "readResource", uri=f"zm://memory/{memory_id}"),
        "outsider_scope": op("outsider", "readResource", uri=f"zm://scope/{team}"),
        "outsider_brief": op("outsider", "getPrompt", **brief),
        "outsider_triage": op("outsider", "getPrompt", name="triage", arguments={"scope": team}),
        "reader_triage": op("reader", "getPrompt", name="triage", arguments={"scope": team}),
        "no_prompt": op("owner", "getPrompt", name="nope", arguments={}),
    }

    seen = run_harness(web_url, tokens, list(plan.values()))["calls"]
    outcomes = dict(zip(plan, seen, strict=True))

    answered = {
        name: outcome["data"]
        for name, outcome in outcomes.items()
        if outcome["outcome"] == "result" and "data" in outcome
    }
    assert {p["name"] for p in answered["prompts"]["prompts"]} == {"brief", "receipt", "triage"}
    [message] = answered["brief"]["messages"]
    assert DEPLOYS in message["content"]["text"] and "staging deploys" in message["content"]["text"]
    assert memory_id in answered["triage"]["messages"][0]["content"]["text"]
    assert answered["receipt"]["messages"][0]["content"]["text"]
    assert [r["uri"] for r in answered["resources"]["resources"]] == ["zm://rules"]
    templates = {t["uriTemplate"] for t in answered["templates"]["resourceTemplates"]}
    assert templates == {"zm://memory/{id}", "zm://scope/{id}"}
    [read] = answered["memory"]["contents"]
    assert json.loads(read["text"])["content"] == DEPLOYS
    assert json.loads(answered["scope"]["contents"][0]["text"])["kinds"] == {"decision": 1}
    assert json.loads(answered["rules"]["contents"][0]["text"]) == {"results": []}
    recall = outcomes["recall"]
    assert recall["outcome"] == "result" and not recall["isError"] and recall["structured"]
    assert recall["links"] == [f"zm://memory/{memory_id}"]

    for name in ("outsider_memory", "outsider_scope", "outsider_brief", "outsider_triage"):
        assert code(outcomes[name]) == "not_found", name
        assert DEPLOYS not in json.dumps(outcomes[name]), name
    assert code(outcomes["reader_triage"]) == "forbidden"
    assert code(outcomes["no_prompt"]) == "not_found"
