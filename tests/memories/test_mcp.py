"""The MCP surface, driven by the mcp SDK's own client: over streamable HTTP against a live
uvicorn serving `zeromemory.asgi:application` (the same app `make run` serves), and over stdio
against `manage.py mcp_stdio`.

The server runs in another process and sees only committed data, hence the transactional tests.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Implementation

from memories.mcp.contract import DESCRIPTIONS
from memories.models import ActivityLog, Memory, Provenance
from memories.services.remember import RememberInput, memory_remember
from scopes.models import ScopeKind
from scopes.services import token_create, token_revoke
from tests.factories import make_token
from tests.helpers import child_env
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.django_db(transaction=True)

BASE_DIR = Path(settings.BASE_DIR)
CLIENT = Implementation(name="pytest-agent", version="1.2")
TOOLS = set(DESCRIPTIONS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_uvicorn(*extra: str, **env: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "zeromemory.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-access-log",
            *extra,
        ],
        cwd=BASE_DIR,
        env=child_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return proc, base
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    stop(proc)
    raise AssertionError("uvicorn did not come up:\n" + (proc.stdout.read() or ""))


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    return out or ""


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    """A live server for the whole module (each test's data is committed, then flushed)."""
    with django_db_blocker.unblock():
        proc, base = start_uvicorn()
    yield base
    output = stop(proc)
    assert "Traceback" not in output, output


@asynccontextmanager
async def http_session(base: str, secret: str, path: str = "/mcp") -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {secret}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
        streamable_http_client(f"{base}{path}", http_client=http) as (read, write),
        ClientSession(read, write, client_info=CLIENT) as session,
    ):
        await session.initialize()
        yield session


def over_http(
    base: str, secret: str, script: Callable[[ClientSession], Awaitable[Any]], path: str = "/mcp"
) -> Any:
    async def main() -> Any:
        async with http_session(base, secret, path) as session:
            return await script(session)

    return anyio.run(main)


def answer(result: CallToolResult) -> dict[str, Any]:
    """The structured content, checked against the JSON text block that repeats it."""
    assert result.structured_content is not None
    [block] = result.content
    assert json.loads(block.text) == result.structured_content
    return result.structured_content


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    return answer(result)


def error_code(result: CallToolResult) -> str:
    assert result.is_error
    error = answer(result)["error"]
    assert error["message"]
    assert "Traceback" not in error["message"]
    return error["code"]


def remember_directly(user, content: str, scope: str, kind: str = "decision") -> str:
    request = RememberInput(content=content, kind=kind, scope=scope)
    return memory_remember(actor=Actor(user=user), request=request).memory.public_id


def test_tools_state_the_contract_with_annotations_in_small_descriptions(server, tenancy):
    async def script(session: ClientSession):
        return session.instructions, (await session.list_tools()).tools

    instructions, tools = over_http(server, make_token(tenancy.owner), script)
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


def test_every_tool_works_over_http_as_the_token_user(server, tenancy, kinds_seeded):
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

    seen = over_http(server, make_token(tenancy.owner), script)

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
    server, tenancy, kinds_seeded
):
    content = "Preferimos desplegar los viernes por la tarde, nunca los lunes por la mañana."
    verbatim = "nunca los lunes por la mañana"

    async def script(session: ClientSession):
        args = {"content": content, "kind": "preference", "verbatim": verbatim}
        return ok(await session.call_tool("remember", args))

    written = over_http(server, make_token(tenancy.writer), script)
    assert written["translation_status"] == "pending"
    assert written["content_lang"] == "es" and written["content"] == content
    assert "English" in written["notice"]
    memory = Memory.objects.get(public_id=written["id"])
    assert memory.scope.kind == ScopeKind.PERSONAL and memory.scope.owner == tenancy.writer
    assert memory.provenance.get().verbatim == verbatim


def post_tools_call(base: str, headers: dict[str, str]) -> httpx2.Response:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_scopes", "arguments": {}},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        **headers,
    }
    return httpx2.post(f"{base}/mcp", json=call, headers=headers, timeout=10)


def test_missing_bad_or_revoked_tokens_get_401_before_any_tool(server, tenancy):
    issued = token_create(actor=Actor(user=tenancy.owner), name="soon revoked")
    token_revoke(actor=Actor(user=tenancy.owner), token=issued.token)
    attempts = {
        "missing": {},
        "not bearer": {"Authorization": f"Basic {issued.secret}"},
        "unknown": {"Authorization": "Bearer zm_not-a-real-token"},
        "revoked": {"Authorization": f"Bearer {issued.secret}"},
    }
    for label, headers in attempts.items():
        response = post_tools_call(server, headers)
        assert response.status_code == 401, label
        assert response.json()["error"]["code"] == "unauthorized", label
        assert response.headers["WWW-Authenticate"].startswith("Bearer"), label
    assert not ActivityLog.objects.exists()

    async def connect() -> None:
        async with http_session(server, issued.secret):
            pass

    with pytest.raises(Exception):  # noqa: B017 - the SDK reports the refused connection
        anyio.run(connect)


def test_a_foreign_host_is_refused(server, tenancy):
    headers = {"Authorization": f"Bearer {make_token(tenancy.owner)}", "Host": "evil.example"}
    response = post_tools_call(server, headers)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_an_outsider_gets_not_found_for_another_users_memory_and_scope(
    server, tenancy, kinds_seeded
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

    seen = over_http(server, make_token(tenancy.outsider), script)
    for name in ("forget", "restore", "recall", "remember", "context"):
        assert error_code(seen[name]) == "not_found", name
    assert team not in {scope["id"] for scope in ok(seen["scopes"])["scopes"]}
    assert Memory.objects.get(public_id=memory_id).valid
    assert Memory.objects.count() == 1


def test_a_read_only_token_or_reader_cannot_write(server, tenancy, kinds_seeded):
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

    read_only = over_http(server, make_token(tenancy.owner, read_only=True), script)
    for name in ("remember", "remember_personal", "forget", "restore"):
        assert error_code(read_only[name]) == "forbidden", name
    assert ok(read_only["recall"])["results"][0]["id"] == memory_id
    assert not any(scope["writable"] for scope in ok(read_only["scopes"])["scopes"])

    reader = over_http(server, make_token(tenancy.reader), script)
    for name in ("remember", "forget", "restore"):
        assert error_code(reader[name]) == "forbidden", name
    assert Memory.objects.count() == 2  # the reader's personal write is allowed
    assert Memory.objects.get(public_id=memory_id).valid


def test_bad_arguments_answer_validation_failed(server, tenancy, kinds_seeded):
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

    seen, unknown = over_http(server, make_token(tenancy.owner), script)
    assert error_code(unknown) == "not_found"
    for name, result in seen.items():
        assert error_code(result) == "validation_failed", name
    assert "decision" in answer(seen["kind"])["error"]["message"]
    assert "kind" in answer(seen["missing"])["error"]["details"]
    assert "k" in answer(seen["k"])["error"]["details"]
    assert not Memory.objects.exists()


@pytest.fixture(scope="module")
def bare_server(django_db_setup, django_db_blocker):
    """A server started without the ASGI lifespan, and with a low rate limit."""
    with django_db_blocker.unblock():
        proc, base = start_uvicorn("--lifespan", "off", ZM_API_RATE="4/min")
    yield base
    output = stop(proc)
    assert "Traceback" not in output, output


def test_the_endpoint_works_without_the_asgi_lifespan_and_with_a_slash(bare_server, tenancy):
    async def script(session: ClientSession):
        return ok(await session.call_tool("list_scopes", {}))

    scopes = over_http(bare_server, make_token(tenancy.owner), script, path="/mcp/")
    assert tenancy.team.public_id in {scope["id"] for scope in scopes["scopes"]}


def test_calls_over_the_rate_answer_rate_limited(bare_server, tenancy):
    async def script(session: ClientSession):
        return [await session.call_tool("list_scopes", {}) for _ in range(5)]

    results = over_http(bare_server, make_token(tenancy.owner), script)
    assert [result.is_error for result in results] == [False] * 4 + [True]
    error = answer(results[-1])["error"]
    assert error["code"] == "rate_limited" and error["details"]["retry_after"] > 0


def test_a_session_is_bound_to_the_token_that_opened_it(server, tenancy):
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    owner = {"Authorization": f"Bearer {make_token(tenancy.owner)}", **accept}
    opened = httpx2.post(f"{server}/mcp", json=opening, headers=owner, timeout=10)
    assert opened.status_code == 200
    session = {"Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
    outsider = {"Authorization": f"Bearer {make_token(tenancy.outsider)}", **session}
    assert post_tools_call(server, outsider).status_code == 404
    assert post_tools_call(server, {**owner, **session}).status_code == 200


def test_every_tool_works_over_stdio(tenancy, kinds_seeded):
    team = tenancy.team.public_id
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio"],
        env=child_env(ZM_TOKEN=make_token(tenancy.writer)),
        cwd=str(BASE_DIR),
    )

    async def main() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, client_info=CLIENT) as session,
        ):
            await session.initialize()
            seen["tools"] = {tool.name for tool in (await session.list_tools()).tools}
            seen["scopes"] = ok(await session.call_tool("list_scopes", {}))
            args = {"content": "Use ruff for lint and format.", "kind": "convention", "scope": team}
            seen["remember"] = ok(await session.call_tool("remember", args))
            memory_id = seen["remember"]["id"]
            seen["recall"] = ok(await session.call_tool("recall", {"query": "lint tool"}))
            seen["context"] = ok(await session.call_tool("build_context", {"topic": "linting"}))
            seen["briefing"] = ok(await session.call_tool("briefing", {}))
            forget_args = {"memory_id": memory_id, "reason": "Testing."}
            seen["forget"] = ok(await session.call_tool("forget", forget_args))
            seen["restore"] = ok(await session.call_tool("restore", {"memory_id": memory_id}))
        return seen

    seen = anyio.run(main)
    assert seen["tools"] == TOOLS
    assert team in {scope["id"] for scope in seen["scopes"]["scopes"]}
    memory_id = seen["remember"]["id"]
    assert seen["recall"]["results"][0]["id"] == memory_id
    assert seen["context"]["sections"] and seen["briefing"]["sections"]
    assert (seen["forget"]["state"], seen["restore"]["state"]) == ("forgotten", "valid")
    assert Provenance.objects.get(memory__public_id=memory_id).client_name == "pytest-agent/1.2"
    rows = ActivityLog.objects.filter(user=tenancy.writer)
    assert {(row.surface, row.client_name) for row in rows} == {("mcp", "pytest-agent/1.2")}


def test_stdio_refuses_a_bad_token_before_serving(tenancy):
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio"],
        cwd=BASE_DIR,
        env=child_env(ZM_TOKEN="zm_not-a-real-token"),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert "not valid" in done.stderr


def stdio_list_scopes(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_stdio", *args], env=env, cwd=str(BASE_DIR)
    )

    async def main() -> dict[str, Any]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, client_info=CLIENT) as session,
        ):
            await session.initialize()
            return ok(await session.call_tool("list_scopes", {}))

    return anyio.run(main)


def test_stdio_reads_the_token_from_a_file_and_keeps_it_off_the_command_line(tenancy, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(make_token(tenancy.writer) + "\n")
    token_file.chmod(0o600)
    env = {k: v for k, v in child_env().items() if k != "ZM_TOKEN"}
    scopes = stdio_list_scopes(["--token-file", str(token_file)], env)
    assert tenancy.team.public_id in {scope["id"] for scope in scopes["scopes"]}


def test_stdio_token_flag_still_works_with_a_warning(tenancy):
    secret = make_token(tenancy.writer)
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", "--token", secret],
        cwd=BASE_DIR,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    # With stdin closed the server exits at once; what matters is the warning before it.
    assert "warning: --token shows the secret" in done.stderr
    assert secret not in done.stderr


def test_stdio_without_a_token_says_how_to_give_one(tenancy):
    env = {k: v for k, v in child_env().items() if k != "ZM_TOKEN"}
    done = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0 and done.stdout == ""
    assert "ZM_TOKEN" in done.stderr and "--token-file" in done.stderr


def test_malformed_bodies_over_http_never_answer_5xx(server, tenancy):
    """What the SDK parses itself (the JSON-RPC envelope) holds against hostile bodies too."""
    headers = {
        "Authorization": f"Bearer {make_token(tenancy.owner)}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    call = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        b'"params": {"name": "recall", "arguments": {"query": %s}}}'
    )
    bodies = {
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "deep arguments": call % (b"[" * 50_000 + b"]" * 50_000),
        "lone surrogate": call % b'"\\ud800"',
        "nul": call % b'"a\\u0000b"',
        "not utf-8": call % b'"\xff\xfe"',
        "huge number": call % (b"1" * 5000),
        "not json": b"{",
    }
    for label, body in bodies.items():
        response = httpx2.post(f"{server}/mcp", content=body, headers=headers, timeout=30)
        assert response.status_code < 500, (label, response.status_code, response.text[:300])
        assert "internal" not in response.text, (label, response.text[:300])
