"""The MCP resources besides `zm://rules` (in `memories.mcp.rules_tools`): the templates
`zm://memory/{id}` (one memory, as the memory detail answer) and `zm://scope/{id}` (what a
scope holds), and the resource links that recall, build_context and briefing answers carry to
their memories.

A resource is read through the same door as a tool (`read_as_actor`): a memory or scope the
caller cannot read answers the same not-found error as a missing one, never content.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context
from mcp_types import ResourceLink

from memories import selectors
from memories.mcp.server import read_as_actor
from memories.schemas import MemoryDetailOut, ScopeHoldingsOut
from scopes import access
from scopes.models import Role
from zeromemory.core.actor import Actor

MEMORY_URI = "zm://memory/{id}"
SCOPE_URI = "zm://scope/{id}"
JSON = "application/json"

MEMORY_RESOURCE = (
    "One memory you may read, as JSON: content, kind, scope, state, provenance and versions. "
    "The links in recall, build_context and briefing answers point here."
)
SCOPE_RESOURCE = (
    "What a scope you may read holds: its name, kind, your role, and its valid memories "
    "counted by kind."
)


def _json(answer: Any) -> str:
    return json.dumps(answer.model_dump(mode="json"), ensure_ascii=False)


async def memory_resource(id: str, ctx: Context) -> str:
    def work(actor: Actor) -> MemoryDetailOut:
        return MemoryDetailOut.of(selectors.memory_detail(actor=actor, public_id=id))

    return _json(await read_as_actor(ctx, work))


async def scope_resource(id: str, ctx: Context) -> str:
    def work(actor: Actor) -> ScopeHoldingsOut:
        scope = access.readable_scope_with_role(actor, id)
        counts = selectors.scope_kind_counts(scope=scope)
        role = scope.my_role
        return ScopeHoldingsOut(
            id=scope.public_id,
            name=scope.name,
            kind=scope.kind,
            role=Role(role).slug if role is not None else None,
            memories=sum(counts.values()),
            kinds=counts,
        )

    return _json(await read_as_actor(ctx, work))


def memory_ids(answer: dict[str, Any]) -> list[str]:
    """The memory ids of a recall answer (its results) or a context or briefing answer (the
    rows of its sections), once each, in the answer's order."""
    rows = answer.get("results") or [
        row for section in answer.get("sections") or [] for row in section["rows"]
    ]
    return list(dict.fromkeys(row["id"] for row in rows))


def memory_links(answer: dict[str, Any]) -> list[ResourceLink]:
    """A `resource_link` to `zm://memory/<id>` for each memory the answer names."""
    return [
        ResourceLink(
            type="resource_link",
            uri=MEMORY_URI.format(id=memory_id),
            name=memory_id,
            mime_type=JSON,
        )
        for memory_id in memory_ids(answer)
    ]


def add_resources(server: Any) -> None:
    """Register the templates on `server`."""
    server.resource(
        MEMORY_URI, name="memory", title="A memory", description=MEMORY_RESOURCE, mime_type=JSON
    )(memory_resource)
    server.resource(
        SCOPE_URI, name="scope", title="A scope", description=SCOPE_RESOURCE, mime_type=JSON
    )(scope_resource)
