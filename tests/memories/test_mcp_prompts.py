"""The MCP prompts (brief, receipt, triage), the resources (zm://memory/{id}, zm://scope/{id},
zm://rules) and the resource links of read answers, driven in process by the Python SDK's own
client (`tests.mcp_inproc`'s way: the test's transaction, the real server object)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from mcp import Client
from mcp.shared.exceptions import MCPError

from memories.mcp.auth import current_credential, lookup_token
from memories.mcp.tools import build_server
from memories.models import Conflict, ConflictStatus, Memory
from tests.factories import make_token
from tests.mcp_inproc import _keep_connection, prompt_or_read
from tests.memories.mcp_support import ok, remember_directly

pytestmark = pytest.mark.django_db

DEPLOYS = "Deploys go through the staging cluster."


def as_client(secret: str, script: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        current_credential.set(lambda: lookup_token(secret))
        async with Client(build_server()) as client:
            return await script(client)

    with _keep_connection():
        return async_to_sync(main)()


def prompt_text(secret: str, name: str, arguments: dict[str, str]) -> str:
    text, refused = prompt_or_read(secret, prompt=name, arguments=arguments)
    assert refused is None, refused
    return text


def prompt_refused(secret: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    text, refused = prompt_or_read(secret, prompt=name, arguments=arguments)
    assert text is None and refused is not None, text
    return refused


def read(secret: str, uri: str) -> dict[str, Any]:
    text, refused = prompt_or_read(secret, uri=uri)
    assert refused is None, refused
    return json.loads(text)


def read_refused(secret: str, uri: str) -> dict[str, Any]:
    text, refused = prompt_or_read(secret, uri=uri)
    assert text is None and refused is not None, text
    return refused


def test_the_prompts_and_resources_are_listed(tenancy):
    async def script(client: Client) -> Any:
        return (
            (await client.list_prompts()).prompts,
            (await client.list_resources()).resources,
            (await client.list_resource_templates()).resource_templates,
        )

    prompts, resources, templates = as_client(make_token(tenancy.owner), script)
    arguments = {p.name: {(a.name, a.required) for a in p.arguments} for p in prompts}
    assert arguments == {
        "brief": {("task", True), ("scope", False)},
        "receipt": {("conversation_id", True)},
        "triage": {("scope", False)},
    }
    assert all(p.description for p in prompts)
    assert [str(r.uri) for r in resources] == ["zm://rules"]
    assert {t.uri_template for t in templates} == {"zm://memory/{id}", "zm://scope/{id}"}


def test_brief_opens_a_session_with_the_briefing_for_the_task(tenancy):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, DEPLOYS, team)
    owner = make_token(tenancy.owner)

    text = prompt_text(owner, "brief", {"task": "staging cluster deploys", "scope": team})

    assert "staging cluster deploys" in text and DEPLOYS in text
    assert memory_id in text and "mark_used" in text
    everywhere = prompt_text(owner, "brief", {"task": "staging cluster deploys"})
    assert DEPLOYS in everywhere


def test_receipt_reuses_the_session_receipt(tenancy):
    team = tenancy.team.public_id
    remember_directly(tenancy.owner, DEPLOYS, team)
    owner = make_token(tenancy.owner)

    async def script(client: Client) -> Any:
        arguments = {"query": "staging deploys", "conversation_id": "conv-7"}
        await client.call_tool("recall", arguments)
        return await client.call_tool("session_receipt", {"conversation_id": "conv-7"})

    tool_answer = ok(as_client(owner, script))
    text = prompt_text(owner, "receipt", {"conversation_id": "conv-7"})

    assert tool_answer["calls"] == 1 and tool_answer["memories_recalled"] == 1
    line, figures = text.split("\n\n", 1)
    assert line == tool_answer["line"] and json.loads(figures) == tool_answer
    refused = prompt_refused(owner, "receipt", {"conversation_id": " "})
    assert refused["code"] == "validation_failed"


def test_triage_walks_the_open_conflicts_of_administered_scopes(tenancy):
    team = tenancy.team.public_id
    one = remember_directly(tenancy.owner, "Lint runs on every push to main.", team)
    other = remember_directly(tenancy.owner, "Every push to main runs the linter.", team)
    pair = Conflict.objects.create(
        scope=tenancy.team,
        memory_a=Memory.objects.get(public_id=one),
        memory_b=Memory.objects.get(public_id=other),
        status=ConflictStatus.OPEN,
    )

    text = prompt_text(make_token(tenancy.owner), "triage", {"scope": team})

    assert pair.public_id in text and one in text and other in text
    assert "resolve_conflict" in text and "Lint runs on every push to main." in text
    assert "empty" in prompt_text(make_token(tenancy.writer), "triage", {})
    assert prompt_refused(make_token(tenancy.reader), "triage", {"scope": team})["code"] == (
        "forbidden"
    )


def test_an_outsider_gets_no_brief_triage_or_resource_of_the_team_scope(tenancy):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, DEPLOYS, team)
    Conflict.objects.create(
        scope=tenancy.team,
        memory_a=Memory.objects.get(public_id=memory_id),
        status=ConflictStatus.OPEN,
    )
    outsider = make_token(tenancy.outsider)

    brief = prompt_refused(outsider, "brief", {"task": "deploys", "scope": team})
    triage = prompt_refused(outsider, "triage", {"scope": team})
    memory = read_refused(outsider, f"zm://memory/{memory_id}")
    missing = read_refused(outsider, "zm://memory/mem_doesnotexist")
    scope = read_refused(outsider, f"zm://scope/{team}")

    for envelope in (brief, triage, memory, missing, scope):
        assert envelope["code"] == "not_found", envelope
        assert DEPLOYS not in json.dumps(envelope)
    assert memory["message"] == missing["message"].replace("mem_doesnotexist", memory_id)
    assert "empty" in prompt_text(outsider, "triage", {})  # its own queue, not the team's


def test_the_memory_and_scope_resources_answer_readers(tenancy):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, DEPLOYS, team)
    remember_directly(tenancy.owner, "Ports below 1024 need root.", team, kind="fact")
    reader = make_token(tenancy.reader)

    memory = read(reader, f"zm://memory/{memory_id}")
    scope = read(reader, f"zm://scope/{team}")

    assert memory["id"] == memory_id and memory["content"] == DEPLOYS
    assert memory["provenance"] and "versions" in memory
    assert scope == {
        "id": team,
        "name": tenancy.team.name,
        "kind": "team",
        "role": "reader",
        "memories": 2,
        "kinds": {"decision": 1, "fact": 1},
    }
    assert read(make_token(tenancy.owner), "zm://rules") == {"results": []}


def test_bad_prompt_names_and_arguments_answer_the_error_shape(tenancy):
    owner = make_token(tenancy.owner)
    assert prompt_refused(owner, "nope", {})["code"] == "not_found"
    assert prompt_refused(owner, "brief", {})["code"] == "validation_failed"
    unknown = prompt_refused(owner, "brief", {"task": "x", "colour": "red"})
    assert unknown["code"] == "validation_failed" and "colour" in unknown["details"]
    long_task = prompt_refused(owner, "brief", {"task": "x" * 5000})
    assert long_task["code"] == "validation_failed"
    for uri in ("zm://memory/a%00b", "zm://memory/..%2F..", "zm://nothing/here"):
        assert read_refused(owner, uri)["code"] == "not_found", uri


def test_read_answers_carry_resource_links_to_their_memories(tenancy):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, DEPLOYS, team)
    owner = make_token(tenancy.owner)

    async def script(client: Client) -> Any:
        return {
            "recall": await client.call_tool("recall", {"query": "staging cluster deploys"}),
            "build_context": await client.call_tool("build_context", {"topic": "deploys"}),
            "briefing": await client.call_tool("briefing", {}),
            "forget": await client.call_tool("forget", {"memory_id": memory_id, "reason": "Old."}),
        }

    seen = as_client(owner, script)

    for name in ("recall", "build_context", "briefing"):
        result = seen[name]
        answer = ok(result)
        links = [block for block in result.content if block.type == "resource_link"]
        assert [str(link.uri) for link in links] == [f"zm://memory/{memory_id}"], name
        assert links[0].name == memory_id and links[0].mime_type == "application/json"
        assert memory_id in json.dumps(answer)
    assert [block.type for block in seen["forget"].content] == ["text"]


def test_a_prompt_argument_of_the_wrong_type_names_the_argument():
    # The Python SDK's client refuses a non-string argument itself: ask the server object, as a
    # client that sends one reaches it.
    with pytest.raises(MCPError) as refused:
        async_to_sync(build_server().get_prompt)("brief", {"task": 5})
    envelope = refused.value.error.data["error"]
    assert envelope["code"] == "validation_failed" and "task" in envelope["details"], envelope
