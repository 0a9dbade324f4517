"""The MCP tool `link`: make or take back a typed link between two memories of one scope. Like
the other tools it validates, obtains both memories through the selectors (the access module),
calls the same service as the REST view, and shapes the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from django.utils.translation import gettext as _
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memories import selectors
from memories.entities import links
from memories.mcp.server import memory_to_change, named, run_tool
from memories.schemas import MemoryLinkOut
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound

LinkTypeName = Literal[links.LINK_TYPES]


async def link(
    ctx: Context,
    memory_id: Annotated[str, Field(max_length=40, description="A memory you may write.")],
    to: Annotated[str, Field(max_length=40, description="A memory of the same scope.")],
    type: LinkTypeName = "relates_to",  # noqa: A002 - the argument's name in the contract
    remove: Annotated[bool, Field(strict=True, description="true: take the link back.")] = False,
) -> Annotated[CallToolResult, MemoryLinkOut]:
    def work(actor: Actor) -> MemoryLinkOut:
        source = memory_to_change(actor, memory_id)
        target = named("to", lambda: selectors.memory_for_read(actor=actor, public_id=to))
        if not remove:
            written = links.link_create(actor=actor, source=source, target=target, link_type=type)
            return MemoryLinkOut.of(written.link)
        found = (
            links.readable_links(actor)
            .filter(source=source, target=target, link_type=type, removed_at__isnull=True)
            .first()
        )
        if found is None:
            raise NotFound(_("No live link of this type between these memories.")).naming("to")
        return MemoryLinkOut.of(links.link_remove(actor=actor, link=found))

    return await run_tool(ctx, work)


LINK_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        link,
        "Link memories",
        ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
]
