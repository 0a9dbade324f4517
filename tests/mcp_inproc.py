"""The MCP tools driven in process by the SDK's own client, for matrix tests.

The SDK connects `Client` to the server object directly (no transport). The call runs under
`async_to_sync`, so the tools' `sync_to_async(thread_sensitive=True)` work runs in the test's own
thread, on its connection and inside its transaction: the rows a test made are visible and are
rolled back after it. The credential is the same context variable the HTTP door sets.

Like Django's own test client, the call leaves the test's connection open: the tools' connection
housekeeping (`close_old_connections` in `orm_call`, which closes a connection inside a transaction)
is idle for its duration, and nothing else of the server is changed.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from functools import cache
from typing import Any
from unittest import mock

from asgiref.sync import async_to_sync
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from memories.mcp.auth import current_credential, lookup_token
from memories.mcp.tools import build_server

# One server per test process, as the HTTP door keeps one per process: building one registers
# every tool's schemas (about 90 ms), and each call below is its own client session on it.
_server = cache(build_server)


async def _call(secret: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
    current_credential.set(lambda: lookup_token(secret))
    async with Client(_server()) as client:
        return await client.call_tool(name, arguments)


async def _opened(secret: str, uri: str | None) -> tuple[str | None, str | None]:
    current_credential.set(lambda: lookup_token(secret))
    async with Client(_server()) as client:
        text = None
        if uri is not None:
            text = (await client.read_resource(uri)).contents[0].text
        return client.instructions, text


async def _names() -> list[str]:
    async with Client(_server()) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


def _keep_connection() -> ExitStack:
    stack = ExitStack()
    stack.enter_context(mock.patch("zeromemory.core.outage.close_old_connections", lambda: None))
    return stack


def call_tool(secret: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
    with _keep_connection():
        return async_to_sync(_call)(secret, name, arguments)


def opened(secret: str, uri: str | None = None) -> tuple[str | None, str | None]:
    """The instructions the server answered the initialization with, and the text of the
    resource `uri` read on the same connection (None when no uri is given). The instructions
    are read on a thread of their own, so only committed rows show in them."""
    with _keep_connection():
        return async_to_sync(_opened)(secret, uri)


def tool_names() -> list[str]:
    with _keep_connection():
        return async_to_sync(_names)()


def structured(result: CallToolResult) -> dict[str, Any]:
    """The answer's structured content; for a tool error, the error envelope of its text (an
    error carries no structured content: clients check that against the output schema)."""
    if result.is_error:
        assert result.structured_content is None, result.structured_content
        [block] = result.content
        return json.loads(block.text)
    assert result.structured_content is not None, result.content
    return result.structured_content


async def _prompt_or_read(
    secret: str, prompt: str | None, arguments: dict[str, Any], uri: str | None
) -> tuple[str | None, dict[str, Any] | None]:
    current_credential.set(lambda: lookup_token(secret))
    async with Client(_server()) as client:
        try:
            if prompt is not None:
                [message] = (await client.get_prompt(prompt, arguments)).messages
                assert message.role == "user"
                return message.content.text, None
            [contents] = (await client.read_resource(uri)).contents
            assert contents.mime_type == "application/json"
            return contents.text, None
        except MCPError as exc:
            envelope = exc.error.data["error"]
            assert exc.error.message.startswith(f"{envelope['code']}: ") and envelope["message"]
            return None, envelope


def prompt_or_read(
    secret: str,
    *,
    prompt: str | None = None,
    arguments: dict[str, Any] | None = None,
    uri: str | None = None,
) -> tuple[str | None, dict[str, Any] | None]:
    """The text of the prompt `prompt` (its one user message) or of the resource `uri`, or the
    error envelope its refusal (a JSON-RPC error) carries: (text, None) or (None, envelope)."""
    with _keep_connection():
        return async_to_sync(_prompt_or_read)(secret, prompt, arguments or {}, uri)
