"""What the MCP tests share: SDK client sessions over streamable HTTP (against a web process
that tests.served starts) and helpers that read tool results."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Implementation

from memories.mcp.contract import DESCRIPTIONS
from memories.services.remember import RememberInput, memory_remember
from tests.mcp_inproc import structured
from zeromemory.core.actor import Actor

CLIENT = Implementation(name="pytest-agent", version="1.2")
TOOLS = set(DESCRIPTIONS)


@asynccontextmanager
async def http_session(base: str, secret: str, path: str = "/mcp") -> AsyncIterator[ClientSession]:
    # The stateless endpoint names the agent by its User-Agent (there is no handshake to keep).
    headers = {"Authorization": f"Bearer {secret}", "User-Agent": f"{CLIENT.name}/{CLIENT.version}"}
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
    """The structured content, checked against the JSON text block that repeats it; for a tool
    error, the error envelope that is its only text block."""
    if result.is_error:
        return structured(result)
    [block] = [block for block in result.content if block.type == "text"]  # then resource links
    assert json.loads(block.text) == structured(result)
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
