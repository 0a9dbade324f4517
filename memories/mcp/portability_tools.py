"""The MCP tool `export_memories`: a single-use download URL for an export of scopes the caller
administers (a zip is no tool answer; the URL is fetched with any HTTP client)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from django.conf import settings
from django.urls import reverse
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memories.mcp.server import named, run_tool
from memories.portability.export import export_size_hint
from memories.portability.schemas import ExportLinkOut
from memories.portability.service import exportable_scopes
from memories.portability.tickets import ticket_issue
from zeromemory.core.actor import Actor


async def export_memories(
    ctx: Context,
    scopes: Annotated[
        list[Annotated[str, Field(max_length=40)]] | None,
        Field(max_length=50, description="Scope ids you administer; omit for all of them."),
    ] = None,
) -> Annotated[CallToolResult, ExportLinkOut]:
    def work(actor: Actor) -> ExportLinkOut:
        chosen = named("scopes", lambda: exportable_scopes(actor=actor, scope_ids=scopes))
        ticket, signed = ticket_issue(actor=actor, scopes=chosen)
        path = reverse("api-export-download", kwargs={"ticket": signed})
        return ExportLinkOut(
            url=f"{settings.PUBLIC_URL}{path}",
            expires_at=ticket.expires_at,
            scopes=ticket.scopes,
            memories=export_size_hint(scopes=chosen),
        )

    return await run_tool(ctx, work)


PORTABILITY_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        export_memories,
        "Export memories",
        ToolAnnotations(
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
]
