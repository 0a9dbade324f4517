"""The MCP tools over stdio (`manage.py mcp_stdio`), with the token from ZM_TOKEN or a file."""

import subprocess
import sys
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from memories.models import ActivityLog, Provenance
from tests.factories import make_token
from tests.helpers import child_env
from tests.memories.mcp_support import (
    CLIENT,
    TOOLS,
    ok,
)
from tests.served import BASE_DIR

pytestmark = pytest.mark.django_db(transaction=True)


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
