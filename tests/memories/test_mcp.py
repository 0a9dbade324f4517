"""The MCP surface, driven by the mcp SDK's own client: over streamable HTTP against a live
uvicorn serving `zeromemory.asgi:application` (the same app `make run` serves), and over stdio
against `manage.py mcp_stdio`; and by the official TypeScript SDK over the same live server.

The server runs in another process and sees only committed data, hence the transactional tests.
"""

import json
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp_types import CallToolResult

from memories.models import (
    ActivityLog,
    Conflict,
    ConflictStatus,
    Entity,
    Memory,
    Provenance,
    Rule,
)
from scopes.models import ScopeKind
from scopes.services import token_create, token_revoke
from tests.factories import make_token
from tests.memories.mcp_support import (
    TOOLS,
    answer,
    error_code,
    http_session,
    ok,
    over_http,
    post_tools_call,
    remember_directly,
)
from tests.memories.mcp_ts_support import OK, step, typescript_sdk_failures
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.django_db(transaction=True)


def test_tools_state_the_contract_with_annotations_in_small_descriptions(web_url, tenancy):
    async def script(session: ClientSession):
        return session.instructions, (await session.list_tools()).tools

    instructions, tools = over_http(web_url, make_token(tenancy.owner), script)
    assert {tool.name for tool in tools} == TOOLS
    assert "English" in instructions and "never translates" in instructions
    by_name = {tool.name: tool for tool in tools}
    for tool in tools:
        assert len(tool.description.encode("utf-8")) <= 2048, tool.name
        assert tool.annotations is not None and tool.annotations.title
        assert tool.output_schema is not None
    for name in ("recall", "build_context", "briefing", "list_scopes"):
        assert by_name[name].annotations.read_only_hint is True
    remember = by_name["remember"]
    assert remember.annotations.read_only_hint is False
    assert remember.annotations.destructive_hint is False
    assert remember.annotations.idempotent_hint is False
    assert by_name["forget"].annotations.destructive_hint is True
    assert by_name["restore"].annotations.destructive_hint is False
    assert {"content", "kind", "scope", "verbatim", "idempotency_key"} <= set(
        remember.input_schema["properties"]
    )
    assert remember.input_schema["required"] == ["content", "kind"]
    for phrase in ("in English", "verbatim", "file paths"):
        assert phrase in remember.description
    for name in ("recall", "build_context"):
        assert "English" in by_name[name].description
        assert "exactly as sent" in by_name[name].description


def test_every_tool_works_over_http_as_the_token_user(web_url, tenancy, kinds_seeded):
    team = tenancy.team.public_id
    content = "The billing service retries webhooks 5 times with exponential backoff."

    async def script(session: ClientSession) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        seen["scopes"] = ok(await session.call_tool("list_scopes", {}))
        args = {"content": content, "kind": "decision", "scope": team}
        seen["remember"] = ok(await session.call_tool("remember", args))
        seen["again"] = ok(await session.call_tool("remember", args))
        recall_args = {"query": "webhook retries billing", "scopes": [team], "k": 5}
        seen["recall"] = ok(await session.call_tool("recall", recall_args))
        context_args = {"topic": "billing webhooks", "max_tokens": 500}
        seen["context"] = ok(await session.call_tool("build_context", context_args))
        seen["briefing"] = ok(await session.call_tool("briefing", {"max_tokens": 500}))
        memory_id = seen["remember"]["id"]
        forget_args = {"memory_id": memory_id, "reason": "Moved to the queue service."}
        seen["forget"] = ok(await session.call_tool("forget", forget_args))
        seen["again_forget"] = await session.call_tool("forget", forget_args)
        seen["restore"] = ok(await session.call_tool("restore", {"memory_id": memory_id}))
        return seen

    seen = over_http(web_url, make_token(tenancy.owner), script)

    scopes = {scope["id"]: scope for scope in seen["scopes"]["scopes"]}
    assert scopes[team]["writable"] is True and scopes[team]["role"] == "admin"
    assert any(scope["kind"] == ScopeKind.PERSONAL for scope in scopes.values())

    written = seen["remember"]
    assert written["deduplicated"] is False and written["translation_status"] == "skipped"
    assert written["scope"] == team and written["similar_existing"] == []
    assert seen["again"]["id"] == written["id"] and seen["again"]["deduplicated"] is True

    hits = seen["recall"]["results"]
    assert seen["recall"]["query"] == "webhook retries billing"
    assert hits[0]["id"] == written["id"] and hits[0]["content"] == content
    rows = [row["id"] for section in seen["context"]["sections"] for row in section["rows"]]
    assert written["id"] in rows and content in seen["context"]["markdown"]
    assert seen["context"]["topic"] == "billing webhooks"
    assert seen["briefing"]["topic"] is None and seen["briefing"]["sections"]

    assert seen["forget"]["state"] == "forgotten"
    assert seen["forget"]["forgotten_reason"] == "Moved to the queue service."
    assert error_code(seen["again_forget"]) == "conflict"
    assert seen["restore"]["state"] == "valid"

    memory = Memory.objects.get(public_id=written["id"])
    assert memory.valid and memory.agent_name == "pytest-agent/1.2"
    provenance = list(Provenance.objects.filter(memory=memory).order_by("id"))
    assert [p.absorbed for p in provenance] == [False, True]
    assert {p.client_name for p in provenance} == {"pytest-agent/1.2"}
    assert {p.created_by_id for p in provenance} == {tenancy.owner.id}

    rows = ActivityLog.objects.filter(user=tenancy.owner)
    assert {row.surface for row in rows} == {"mcp"}
    assert {row.client_name for row in rows} == {"pytest-agent/1.2"}
    operations = sorted(row.operation for row in rows)
    assert operations == ["briefing", "build_context", "recall", "remember", "remember"]
    recalled = rows.get(operation="recall")
    assert recalled.query == "webhook retries billing" and recalled.scopes == [team]
    assert rows.get(operation="build_context").query == "billing webhooks"


def test_a_write_in_another_language_is_stored_pending_with_its_verbatim(
    web_url, tenancy, kinds_seeded
):
    content = "Preferimos desplegar los viernes por la tarde, nunca los lunes por la mañana."
    verbatim = "nunca los lunes por la mañana"

    async def script(session: ClientSession):
        args = {"content": content, "kind": "preference", "verbatim": verbatim}
        return ok(await session.call_tool("remember", args))

    written = over_http(web_url, make_token(tenancy.writer), script)
    assert written["translation_status"] == "pending"
    assert written["content_lang"] == "es" and written["content"] == content
    assert "English" in written["notice"]
    memory = Memory.objects.get(public_id=written["id"])
    assert memory.scope.kind == ScopeKind.PERSONAL and memory.scope.owner == tenancy.writer
    assert memory.provenance.get().verbatim == verbatim


def test_missing_bad_or_revoked_tokens_get_401_before_any_tool(web_url, tenancy):
    issued = token_create(actor=Actor(user=tenancy.owner), name="soon revoked")
    token_revoke(actor=Actor(user=tenancy.owner), token=issued.token)
    attempts = {
        "missing": {},
        "not bearer": {"Authorization": f"Basic {issued.secret}"},
        "unknown": {"Authorization": "Bearer zm_not-a-real-token"},
        "revoked": {"Authorization": f"Bearer {issued.secret}"},
    }
    for label, headers in attempts.items():
        response = post_tools_call(web_url, headers)
        assert response.status_code == 401, label
        assert response.json()["error"]["code"] == "unauthorized", label
        assert response.headers["WWW-Authenticate"].startswith("Bearer"), label
    assert not ActivityLog.objects.exists()

    async def connect() -> None:
        async with http_session(web_url, issued.secret):
            pass

    with pytest.raises(Exception):  # noqa: B017 - the SDK reports the refused connection
        anyio.run(connect)


def test_a_foreign_host_is_refused(web_url, tenancy):
    headers = {"Authorization": f"Bearer {make_token(tenancy.owner)}", "Host": "evil.example"}
    response = post_tools_call(web_url, headers)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_an_outsider_gets_not_found_for_another_users_memory_and_scope(
    web_url, tenancy, kinds_seeded
):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, "Deploys go through the staging cluster.", team)

    async def script(session: ClientSession) -> dict[str, CallToolResult]:
        return {
            "forget": await session.call_tool(
                "forget", {"memory_id": memory_id, "reason": "Not mine."}
            ),
            "restore": await session.call_tool("restore", {"memory_id": memory_id}),
            "recall": await session.call_tool("recall", {"query": "deploys", "scopes": [team]}),
            "remember": await session.call_tool(
                "remember", {"content": "Planted.", "kind": "fact", "scope": team}
            ),
            "context": await session.call_tool(
                "build_context", {"topic": "deploys", "scopes": [team]}
            ),
            "scopes": await session.call_tool("list_scopes", {}),
        }

    seen = over_http(web_url, make_token(tenancy.outsider), script)
    for name in ("forget", "restore", "recall", "remember", "context"):
        assert error_code(seen[name]) == "not_found", name
    assert team not in {scope["id"] for scope in ok(seen["scopes"])["scopes"]}
    assert Memory.objects.get(public_id=memory_id).valid
    assert Memory.objects.count() == 1


def test_a_read_only_token_or_reader_cannot_write(web_url, tenancy, kinds_seeded):
    team = tenancy.team.public_id
    memory_id = remember_directly(tenancy.owner, "Feature flags live in LaunchDarkly.", team)

    async def script(session: ClientSession) -> dict[str, CallToolResult]:
        return {
            "remember": await session.call_tool(
                "remember", {"content": "Read-only write.", "kind": "fact", "scope": team}
            ),
            "remember_personal": await session.call_tool(
                "remember", {"content": "Read-only write.", "kind": "fact"}
            ),
            "forget": await session.call_tool(
                "forget", {"memory_id": memory_id, "reason": "Trying."}
            ),
            "restore": await session.call_tool("restore", {"memory_id": memory_id}),
            "recall": await session.call_tool("recall", {"query": "feature flags"}),
            "scopes": await session.call_tool("list_scopes", {}),
        }

    read_only = over_http(web_url, make_token(tenancy.owner, read_only=True), script)
    for name in ("remember", "remember_personal", "forget", "restore"):
        assert error_code(read_only[name]) == "forbidden", name
    assert ok(read_only["recall"])["results"][0]["id"] == memory_id
    assert not any(scope["writable"] for scope in ok(read_only["scopes"])["scopes"])

    reader = over_http(web_url, make_token(tenancy.reader), script)
    for name in ("remember", "forget", "restore"):
        assert error_code(reader[name]) == "forbidden", name
    assert Memory.objects.count() == 2  # the reader's personal write is allowed
    assert Memory.objects.get(public_id=memory_id).valid


def test_bad_arguments_answer_validation_failed(web_url, tenancy, kinds_seeded):
    async def script(session: ClientSession) -> dict[str, CallToolResult]:
        return {
            "kind": await session.call_tool("remember", {"content": "x y z", "kind": "nope"}),
            "missing": await session.call_tool("remember", {"content": "x y z"}),
            "k": await session.call_tool("recall", {"query": "x", "k": 0}),
            "blank": await session.call_tool("recall", {"query": "   "}),
            "secret": await session.call_tool(
                "remember",
                {"content": "The key is AKIAIOSFODNN7EXAMPLE for prod.", "kind": "fact"},
            ),
            "reason": await session.call_tool("forget", {"memory_id": "mem_x", "reason": 5}),
        }, await session.call_tool("no_such_tool", {})

    seen, unknown = over_http(web_url, make_token(tenancy.owner), script)
    assert error_code(unknown) == "not_found"
    for name, result in seen.items():
        assert error_code(result) == "validation_failed", name
    assert "decision" in answer(seen["kind"])["error"]["message"]
    assert "kind" in answer(seen["missing"])["error"]["details"]
    assert "k" in answer(seen["k"])["error"]["details"]
    assert not Memory.objects.exists()


def test_every_tool_answers_and_fails_readably_through_the_typescript_sdk(
    web_url, tenancy, kinds_seeded
):
    team = tenancy.team.public_id
    personal_id = tenancy.owner.owned_scopes.get(kind=ScopeKind.PERSONAL).public_id
    kept = remember_directly(tenancy.owner, "Deploys go through the staging cluster.", team)
    staging = Entity.objects.create(scope=tenancy.team, kind="service", name="staging cluster")
    one = remember_directly(tenancy.owner, "Lint runs on every push to main.", team)
    other = remember_directly(tenancy.owner, "Every push to main runs the linter.", team)
    pair = Conflict.objects.create(
        scope=tenancy.team,
        memory_a=Memory.objects.get(public_id=one),
        memory_b=Memory.objects.get(public_id=other),
        status=ConflictStatus.OPEN,
    )
    tokens = {
        "owner": make_token(tenancy.owner),
        "reader": make_token(tenancy.reader),
        "outsider": make_token(tenancy.outsider),
    }
    undo = {"conflict_id": pair.public_id, "action": "undo"}  # after resolve_conflict below
    # Run in this order: each tool once to succeed (OK) and once to fail with the code named.
    calls = [
        step("list_scopes", "owner", OK),
        step("list_scopes", "owner", "validation_failed", colour="red"),
        step("remember", "owner", OK, content="Releases ship Mondays.", kind="fact", scope=team),
        step("remember", "reader", "forbidden", content="A reader's try.", kind="fact", scope=team),
        step("recall", "owner", OK, query="staging cluster deploys", scopes=[team]),
        step("recall", "owner", "validation_failed", query=5),
        step("build_context", "owner", OK, topic="deploys", max_tokens=500),
        step("build_context", "owner", "validation_failed", topic="deploys", max_tokens="lots"),
        step("briefing", "owner", OK, max_tokens=500),
        step("briefing", "outsider", "not_found", scopes=[team]),
        step("history", "owner", OK, memory_id=kept),
        step("history", "owner", "not_found", memory_id="mem_doesnotexist"),
        step("forget", "owner", OK, memory_id=kept, reason="Moved to the new cluster."),
        step("forget", "reader", "forbidden", memory_id=one, reason="Trying."),
        step("restore", "owner", OK, memory_id=kept),
        step("restore", "outsider", "not_found", memory_id=kept),
        step("ingest", "owner", OK, content="user: the vault moved.", scope=team),
        step("ingest", "reader", "forbidden", content="user: a reader's chunk.", scope=team),
        step("list_conflicts", "owner", OK, scope=team),
        step("list_conflicts", "reader", "forbidden", scope=team),
        step("resolve_conflict", "owner", OK, conflict_id=pair.public_id, action="keep_both"),
        step("resolve_conflict", "owner", "not_found", conflict_id="cfl_nope", action="keep_both"),
        step("challenge", "owner", OK, memory_id=one, reason="It runs on pull requests too."),
        step("challenge", "outsider", "not_found", memory_id=one, reason="Not mine."),
        step("export_memories", "owner", OK, scopes=[team]),
        step("export_memories", "reader", "forbidden", scopes=[team]),
        step("mark_used", "owner", OK, memory_ids=[kept], conversation_id="ts-1"),
        step("mark_used", "outsider", "not_found", memory_ids=[kept]),
        step("session_receipt", "owner", OK, conversation_id="ts-1"),
        step("session_receipt", "owner", "validation_failed", conversation_id=12),
        # A scope's tools (memories.mcp.scope_tools).
        step("describe_scope", "reader", OK, scope=team),
        step("describe_scope", "outsider", "not_found", scope=team),
        step("get_conflict", "owner", OK, conflict_id=pair.public_id),
        step("get_conflict", "reader", "forbidden", conflict_id=pair.public_id),
        step("resolve_conflicts", "owner", OK, items=[undo], dry_run=True),
        step("resolve_conflicts", "owner", "validation_failed", items=[undo, undo]),
        step("scan_hygiene", "owner", OK, scope=team),
        step("scan_hygiene", "reader", "forbidden", scope=team),
        # The next share of a scan: a cursor is the last subject's memory id of the scope.
        step("scan_hygiene", "owner", OK, scope=team, cursor=one),
        step("scan_hygiene", "owner", "validation_failed", scope=team, cursor="mem_nope"),
        step("export_metrics", "reader", OK, scope=team, days=7),
        step("export_metrics", "owner", "validation_failed", scope=team, days=14),
        # Typed links (memories.mcp.link_tools).
        step("link", "owner", OK, memory_id=one, to=kept, type="depends_on"),
        step("link", "reader", "forbidden", memory_id=one, to=kept, type="depends_on"),
        # What memories are about (memories.mcp.entity_tools).
        step("entities", "reader", OK, scope=team, query="staging"),
        step("entities", "reader", OK, entity_id=staging.public_id),
        step("entities", "outsider", "not_found", entity_id=staging.public_id),
    ]
    # move_memories, share, promote_rule, reject_rule, import_memory, benchmark_memory
    mine = remember_directly(tenancy.owner, "My editor trims trailing spaces.", personal_id)
    rule = Rule.objects.create(
        scope=tenancy.team, memory=Memory.objects.get(public_id=other), text="Lint on push."
    )
    cases = [{"question": "staging cluster deploys", "expected_ids": [kept]}]
    calls += [
        step("move_memories", "owner", OK, memory_ids=[mine], to_scope=team, confirm=True),
        step("move_memories", "owner", "validation_failed", memory_ids=[kept], to_scope=team),
        step("share", "owner", OK, memory_id=kept, to_scope=personal_id),
        step("share", "outsider", "not_found", memory_id=kept, to_scope=personal_id),
        step("promote_rule", "owner", OK, memory_id=kept),
        step("promote_rule", "reader", "forbidden", memory_id=kept),
        step("reject_rule", "owner", OK, rule_id=rule.public_id),
        step("reject_rule", "reader", "forbidden", rule_id=rule.public_id),
        step("import_memory", "owner", OK, scope=team, markdown="## CI\n\nCI runs on push."),
        step("import_memory", "reader", "forbidden", scope=team, markdown="## A\n\nB."),
        step("benchmark_memory", "owner", OK, scope=team, cases=cases),
        step("benchmark_memory", "outsider", "not_found", scope=team, cases=cases),
    ]
    assert {c["tool"] for c in calls if c["expect"] == OK} == TOOLS  # each tool succeeds once
    assert {c["tool"] for c in calls if c["expect"] != OK} == TOOLS  # and fails once

    seen = typescript_sdk_failures(web_url, tokens, calls)

    assert set(seen["tools"]["owner"]) == TOOLS
    assert not seen["problems"], json.dumps(seen["problems"], indent=1)
