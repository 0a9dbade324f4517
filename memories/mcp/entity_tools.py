"""The MCP tool `entities`: search a scope's entities by name, alias or kind, or describe one
(its memories newest first, the entities it appears with, a timeline). Like the other tools it
validates, calls the same selectors as the REST views and returns their answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memories.entities import selectors
from memories.mcp.server import named, run_tool
from memories.models import EntityKind
from memories.schemas import EntitiesToolOut, EntityDetailOut, EntityOut
from zeromemory.core.actor import Actor
from zeromemory.core.paging import DEFAULT_LIMIT, MAX_LIMIT, Page

KindName = Literal[tuple(EntityKind.values)]


async def entities(
    ctx: Context,
    query: Annotated[
        str, Field(max_length=200, description="Part of a name or alias; empty: all.")
    ] = "",
    kind: KindName | None = None,
    scope: Annotated[str, Field(max_length=40, description="A scope id from list_scopes.")] = "",
    entity_id: Annotated[
        str, Field(max_length=40, description="Describe this entity instead of searching.")
    ] = "",
    cursor: Annotated[str, Field(max_length=40, description="next_cursor of a page.")] = "",
    limit: Annotated[int, Field(strict=True, ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
) -> Annotated[CallToolResult, EntitiesToolOut]:
    def work(actor: Actor) -> EntitiesToolOut:
        page = Page(cursor=cursor or None, limit=limit)
        if entity_id:
            entity = named(
                "entity_id", lambda: selectors.entity_for_read(actor=actor, public_id=entity_id)
            )
            description = selectors.entity_description(actor=actor, entity=entity, page=page)
            detail = EntityDetailOut.of(description, aliases=selectors.entity_aliases(entity))
            return EntitiesToolOut(results=[], entity=detail, next_cursor=detail.next_cursor)
        found, next_cursor = selectors.entity_search(
            actor=actor, query=query, kind=kind or "", scope_id=scope, page=page
        )
        results = [EntityOut.of(entity, memories=entity.memory_count) for entity in found]
        return EntitiesToolOut(results=results, entity=None, next_cursor=next_cursor)

    return await run_tool(ctx, work)


ENTITY_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        entities,
        "Entities",
        ToolAnnotations(
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
]
