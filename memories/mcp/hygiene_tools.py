"""The review queue's MCP tools: list_conflicts, resolve_conflict, challenge. Like the other
tools they validate, call the same selector or service as the REST view, and shape the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from memories.hygiene import review
from memories.hygiene import selectors as queue
from memories.hygiene.schemas import ChallengeOut, ConflictOut, ConflictPageOut
from memories.mcp.server import memory_to_change, named, run_tool
from memories.models import ConflictStatus, Relation
from zeromemory.core.actor import Actor
from zeromemory.core.paging import MAX_LIMIT, Page

ConflictId = Annotated[str, Field(max_length=40, description="A conflict id from list_conflicts.")]
# The choices of the models themselves, as the literal strings a tool's input schema lists.
Action = Literal[tuple(review.ACTIONS)]  # the resolutions and undo
Status = Literal[tuple(ConflictStatus.values)]


async def list_conflicts(
    ctx: Context,
    scope: Annotated[str | None, Field(max_length=40)] = None,
    status: Status = ConflictStatus.OPEN,
    verdict: Relation | None = None,
    cursor: Annotated[str | None, Field(max_length=40)] = None,
    limit: Annotated[int, Field(strict=True, ge=1, le=MAX_LIMIT)] = 20,
) -> Annotated[CallToolResult, ConflictPageOut]:
    def work(actor: Actor) -> ConflictPageOut:
        filters = queue.ConflictFilters(scope=scope, status=status, verdict=verdict)
        found, next_cursor = queue.conflict_list(
            actor=actor, filters=filters, page=Page(cursor or None, limit)
        )
        return ConflictPageOut(results=[ConflictOut.of(c) for c in found], next_cursor=next_cursor)

    return await run_tool(ctx, work)


async def resolve_conflict(
    ctx: Context, conflict_id: ConflictId, action: Action
) -> Annotated[CallToolResult, ConflictOut]:
    def work(actor: Actor) -> ConflictOut:
        conflict = named(
            "conflict_id", lambda: queue.conflict_for_review(actor=actor, public_id=conflict_id)
        )
        review.conflict_resolve(actor=actor, conflict=conflict, action=action)
        return ConflictOut.of(queue.conflict_for_review(actor=actor, public_id=conflict_id))

    return await run_tool(ctx, work)


async def challenge(
    ctx: Context,
    memory_id: Annotated[str, Field(max_length=40, description="The memory you dispute.")],
    reason: Annotated[str, Field(max_length=2000, description="Why it is wrong, in English.")],
) -> Annotated[CallToolResult, ChallengeOut]:
    def work(actor: Actor) -> ChallengeOut:
        memory = memory_to_change(actor, memory_id)
        conflict, new = review.memory_challenge(actor=actor, memory=memory, reason=reason)
        return ChallengeOut.of(conflict, new=new, reason=reason)

    return await run_tool(ctx, work)


_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
HYGIENE_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        list_conflicts,
        "List conflicts",
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
    ),
    (resolve_conflict, "Resolve a conflict", _WRITE),
    (challenge, "Challenge a memory", _WRITE),
]
