"""What a memory said then: the MCP tool `history` (the `as_of` argument of recall,
build_context and briefing is in their request models, `memories.recall.inputs`). Like the other
tools it validates, calls the same selector as the REST view, and shapes the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memories import selectors
from memories.mcp.server import named, run_tool
from memories.timeline import HistoryOut
from zeromemory.core.actor import Actor


async def history(
    ctx: Context,
    memory_id: Annotated[
        str, Field(max_length=40, description="A memory id from recall, build_context or briefing.")
    ],
) -> Annotated[CallToolResult, HistoryOut]:
    def work(actor: Actor) -> HistoryOut:
        found = named(
            "memory_id", lambda: selectors.memory_history(actor=actor, public_id=memory_id)
        )
        return HistoryOut.of(found)

    return await run_tool(ctx, work)


HISTORY_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        history,
        "History",
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    ),
]
