"""A scope's MCP tools: describe_scope, get_conflict, resolve_conflicts, scan_hygiene and
export_metrics. Like the other tools they validate, call the same selector or service as the
REST view, and return its answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from memories.hygiene import review, service
from memories.hygiene import selectors as queue
from memories.hygiene.schemas import ConflictOut, ConflictsResolvedOut, ScopeScanOut
from memories.insights import answers, overview
from memories.insights.schemas import InsightsOut, ScopeOverviewOut
from memories.mcp.hygiene_tools import Action, ConflictId
from memories.mcp.server import named, run_tool
from scopes import access
from zeromemory.core.actor import Actor

ScopeId = Annotated[str, Field(max_length=40, description="A scope id from list_scopes.")]


async def describe_scope(
    ctx: Context, scope: ScopeId
) -> Annotated[CallToolResult, ScopeOverviewOut]:
    def work(actor: Actor) -> ScopeOverviewOut:
        return overview.scope_overview(actor=actor, scope_id=scope)

    return await run_tool(ctx, work)


async def get_conflict(
    ctx: Context, conflict_id: ConflictId
) -> Annotated[CallToolResult, ConflictOut]:
    def work(actor: Actor) -> ConflictOut:
        return ConflictOut.of(
            named(
                "conflict_id",
                lambda: queue.conflict_for_review(actor=actor, public_id=conflict_id),
            )
        )

    return await run_tool(ctx, work)


class ResolutionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conflict_id: ConflictId
    action: Action


async def resolve_conflicts(
    ctx: Context,
    items: Annotated[
        list[ResolutionIn],
        Field(min_length=1, max_length=review.MAX_BULK, description="Applied in this order."),
    ],
    dry_run: Annotated[
        bool, Field(strict=True, description="Answer what would happen; write nothing.")
    ] = False,
    confirm: Annotated[
        bool, Field(strict=True, description="Required to resolve more than one item for real.")
    ] = False,
) -> Annotated[CallToolResult, ConflictsResolvedOut]:
    def work(actor: Actor) -> ConflictsResolvedOut:
        conflicts = queue.conflicts_for_review(
            actor=actor, public_ids=[item.conflict_id for item in items]
        )
        results = review.conflicts_resolve(
            actor=actor,
            resolutions=[(c, item.action) for c, item in zip(conflicts, items, strict=True)],
            dry_run=dry_run,
            confirm=confirm,
            render=lambda c: ConflictOut.of(
                queue.conflict_for_review(actor=actor, public_id=c.public_id)
            ),
        )
        return ConflictsResolvedOut(dry_run=dry_run, results=results)

    return await run_tool(ctx, work)


async def scan_hygiene(
    ctx: Context,
    scope: ScopeId,
    cursor: Annotated[
        str | None,
        Field(max_length=40, description="next_cursor of the previous answer, while more."),
    ] = None,
) -> Annotated[CallToolResult, ScopeScanOut]:
    def work(actor: Actor) -> ScopeScanOut:
        found = named("scope", lambda: access.administrable_scope(actor, scope))
        scanned = service.scope_scan_now(actor=actor, scope=found, cursor=cursor or None)
        return ScopeScanOut.of(found.public_id, scanned)

    return await run_tool(ctx, work)


async def export_metrics(
    ctx: Context,
    scope: ScopeId,
    days: Annotated[Literal[7, 30, 90], Field(description="The period, in UTC days.")] = 30,
) -> Annotated[CallToolResult, InsightsOut]:
    def work(actor: Actor) -> InsightsOut:
        return answers.scope_insights(actor=actor, scope_id=scope, days=days)

    return await run_tool(ctx, work)


_READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
SCOPE_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (describe_scope, "Describe a scope", _READ),
    (get_conflict, "Get a conflict", _READ),
    (
        resolve_conflicts,
        "Resolve conflicts",
        ToolAnnotations(
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (
        scan_hygiene,
        "Scan a scope's hygiene",
        ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
    (export_metrics, "Export a scope's metrics", _READ),
]
