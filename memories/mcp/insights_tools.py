"""The insights' MCP tool: session_receipt. Like the other tools it validates, calls the same
selector as the REST view, and returns its answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memories.insights import sessions
from memories.insights.schemas import ReceiptOut
from memories.mcp.server import run_tool
from zeromemory.core.actor import Actor


async def session_receipt(
    ctx: Context,
    conversation_id: Annotated[
        str | None,
        Field(max_length=200, description="The session's id; omit for the one of this call."),
    ] = None,
) -> Annotated[CallToolResult, ReceiptOut]:
    def work(actor: Actor) -> ReceiptOut:
        return sessions.session_receipt(
            actor=actor, conversation_id=conversation_id or actor.conversation_id
        )

    return await run_tool(ctx, work)


INSIGHTS_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        session_receipt,
        "Session receipt",
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    ),
]
