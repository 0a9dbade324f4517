"""The MCP tools: remember, recall, build_context, briefing, forget, restore, list_scopes, ingest
(the review queue's in `memories.mcp.hygiene_tools`, history in `memories.mcp.history_tools`).

Each tool validates its arguments (with the limits REST uses), calls the same service or
selector as the REST view, and shapes the answer; recall, build_context and briefing share
REST's request models outright (`READ_REQUESTS`: the model's schema is the tool's input schema,
and the service parses the arguments with it);
`memories.mcp.server` runs it as the token's user and maps errors. The descriptions are the tool
contract, in `memories.mcp.contract`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from memories.capture.ingest import IngestInput, chunk_ingest
from memories.capture.schemas import IngestOut
from memories.entities.given import MAX_GIVEN_ALIASES, MAX_GIVEN_ENTITIES
from memories.mcp import contract
from memories.mcp.curation_tools import CURATION_TOOLS
from memories.mcp.entity_tools import ENTITY_TOOLS
from memories.mcp.history_tools import HISTORY_TOOLS
from memories.mcp.hygiene_tools import HYGIENE_TOOLS
from memories.mcp.insights_tools import INSIGHTS_TOOLS
from memories.mcp.link_tools import LINK_TOOLS
from memories.mcp.portability_tools import PORTABILITY_TOOLS
from memories.mcp.prompts import add_prompts
from memories.mcp.resources import add_resources, memory_links
from memories.mcp.rules_tools import RULE_TOOLS, RULES_URI, RulesInInstructions, rules_resource
from memories.mcp.scope_tools import SCOPE_TOOLS
from memories.mcp.server import ZeroMemoryServer, memory_to_change, run_tool
from memories.models import ENTITY_NAME_MAX_CHARS, EntityKind, SourceKind, TranslationStatus
from memories.recall import context, inputs
from memories.recall.recall import answer_recall
from memories.schemas import ContextOut, MemoryOut, RecallOut, RememberOut, RememberToolOut
from memories.services import lifecycle
from memories.services.remember import RememberInput, memory_remember
from scopes import selectors as scope_selectors
from scopes.schemas import ScopesOut
from zeromemory.core.actor import Actor

SERVER_NAME = "zero-memory"
SERVER_VERSION = "0.1.0"

MemoryId = Annotated[
    str, Field(max_length=40, description="A memory id from remember, recall or build_context.")
]


class EntityArgument(BaseModel):
    """An entity the memory is about, with its kind and other names."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=ENTITY_NAME_MAX_CHARS)
    kind: EntityKind | None = None
    aliases: list[Annotated[str, Field(max_length=ENTITY_NAME_MAX_CHARS)]] = Field(
        default_factory=list, max_length=MAX_GIVEN_ALIASES
    )


PENDING_NOTICE = (
    "Stored as written; the server translates it to English in the background. "
    "Write content in English next time."
)


async def remember(
    ctx: Context,
    content: Annotated[
        str,
        Field(
            description="The memory, in English. Code, identifiers, file paths and quoted "
            "terms verbatim."
        ),
    ],
    kind: Annotated[
        str, Field(max_length=32, description="One of the kinds the description lists.")
    ],
    scope: Annotated[
        str | None,
        Field(max_length=40, description="A scope id from list_scopes; omit for personal."),
    ] = None,
    verbatim: Annotated[
        str | None,
        Field(
            max_length=4000,
            description="The user's exact words, in their language, when the phrasing matters.",
        ),
    ] = None,
    conversation_id: Annotated[str | None, Field(max_length=200)] = None,
    source_path: Annotated[str | None, Field(max_length=1000)] = None,
    idempotency_key: Annotated[str | None, Field(max_length=200)] = None,
    entities: Annotated[
        list[Annotated[str, Field(max_length=ENTITY_NAME_MAX_CHARS)] | EntityArgument] | None,
        Field(
            max_length=MAX_GIVEN_ENTITIES,
            description="What the memory is about (a service, a person, a repository, a file), "
            "as names or {name, kind, aliases}. Optional: the server also finds identifiers, "
            "paths, URLs, handles, tickets and the names the scope already knows.",
        ),
    ] = None,
) -> Annotated[CallToolResult, RememberToolOut]:
    request = RememberInput(
        content=content,
        kind=kind,
        scope=scope,
        verbatim=verbatim,
        conversation_id=conversation_id or "",
        source_path=source_path or "",
        idempotency_key=idempotency_key,
        source_kind=SourceKind.REMEMBER,
        entities=None
        if entities is None
        else [
            item if isinstance(item, str) else item.model_dump(exclude_none=True, mode="json")
            for item in entities
        ],
    )

    def work(actor: Actor) -> RememberToolOut:
        result = memory_remember(actor=actor, request=request, render=RememberOut.rendered)
        answer = RememberOut.answer(result)
        pending = answer.translation_status == TranslationStatus.PENDING
        return RememberToolOut(**dict(answer), notice=PENDING_NOTICE if pending else None)

    return await run_tool(ctx, work)


# The read tools take their arguments as sent: the service parses them with the request model,
# whose schema is the tool's input schema (`READ_REQUESTS`, `ZeroMemoryServer.add_tool`).
async def recall(ctx: Context, arguments: dict[str, Any]) -> Annotated[CallToolResult, RecallOut]:
    def work(actor: Actor) -> RecallOut:
        return answer_recall(actor=actor, arguments=arguments).answer(arguments["query"])

    return await run_tool(ctx, work, memory_links)


async def build_context(
    ctx: Context, arguments: dict[str, Any]
) -> Annotated[CallToolResult, ContextOut]:
    def work(actor: Actor) -> BaseModel:
        return context.answer_context(actor=actor, arguments=arguments).answer()

    return await run_tool(ctx, work, memory_links)


async def briefing(
    ctx: Context, arguments: dict[str, Any]
) -> Annotated[CallToolResult, ContextOut]:
    def work(actor: Actor) -> BaseModel:
        return context.answer_briefing(actor=actor, arguments=arguments).answer()

    return await run_tool(ctx, work, memory_links)


READ_REQUESTS: dict[str, type[BaseModel]] = {
    "recall": inputs.RecallRequest,
    "build_context": inputs.ContextRequest,
    "briefing": inputs.BriefingRequest,
}


async def forget(
    ctx: Context,
    memory_id: MemoryId,
    reason: Annotated[str, Field(max_length=1000, description="Why, in English.")],
) -> Annotated[CallToolResult, MemoryOut]:
    def work(actor: Actor) -> BaseModel:
        memory = memory_to_change(actor, memory_id)
        return MemoryOut.of(lifecycle.memory_forget(actor=actor, memory=memory, reason=reason))

    return await run_tool(ctx, work)


async def restore(ctx: Context, memory_id: MemoryId) -> Annotated[CallToolResult, MemoryOut]:
    def work(actor: Actor) -> BaseModel:
        memory = memory_to_change(actor, memory_id)
        return MemoryOut.of(lifecycle.memory_restore(actor=actor, memory=memory))

    return await run_tool(ctx, work)


async def ingest(
    ctx: Context,
    content: Annotated[str | None, Field(max_length=settings.MAX_CHUNK_CHARS)] = None,
    source_kind: Annotated[str, Field(max_length=16)] = "transcript",
    conversation_id: Annotated[str | None, Field(max_length=200)] = None,
    source_path: Annotated[str | None, Field(max_length=1000)] = None,
    chunk_hash: Annotated[str | None, Field(max_length=128)] = None,
    scope: Annotated[str | None, Field(max_length=40)] = None,
    probe: Annotated[bool, Field(strict=True)] = False,
) -> Annotated[CallToolResult, IngestOut]:
    request = IngestInput(
        content=content,
        source_kind=source_kind,
        conversation_id=conversation_id or "",
        source_path=source_path or "",
        chunk_hash=chunk_hash or "",
        scope=scope,
        probe=probe,
    )

    def work(actor: Actor) -> IngestOut:
        ingested = chunk_ingest(actor=actor, request=request)
        return IngestOut.of(chunk=ingested.chunk, duplicate=ingested.duplicate)

    return await run_tool(ctx, work)


async def list_scopes(ctx: Context) -> Annotated[CallToolResult, ScopesOut]:
    def work(actor: Actor) -> ScopesOut:
        return ScopesOut(scopes=scope_selectors.readable_scope_answers(actor=actor))

    return await run_tool(ctx, work)


READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
REPEATABLE_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        remember,
        "Remember",
        ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    ),
    (recall, "Recall", READ),
    (build_context, "Build context", READ),
    (briefing, "Briefing", READ),
    (
        forget,
        "Forget",
        ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    ),
    (restore, "Restore", REPEATABLE_WRITE),
    (list_scopes, "List scopes", READ),
    (ingest, "Ingest", REPEATABLE_WRITE),
    *HYGIENE_TOOLS,
    *HISTORY_TOOLS,
    *PORTABILITY_TOOLS,
    *RULE_TOOLS,
    *INSIGHTS_TOOLS,
    *CURATION_TOOLS,  # move_memories, share, promote_rule, reject_rule, import_memory, benchmark
    *SCOPE_TOOLS,
    *LINK_TOOLS,
    *ENTITY_TOOLS,
]


def build_server() -> ZeroMemoryServer:
    """A fresh server with every tool; HTTP and stdio each build their own."""
    server = ZeroMemoryServer(
        name=SERVER_NAME,
        title="zero-memory",
        instructions=contract.SERVER_INSTRUCTIONS,
        version=SERVER_VERSION,
        log_level="WARNING",
    )
    for fn, title, hints in TOOLS:
        name = fn.__name__
        server.add_tool(
            fn,
            name=name,
            title=title,
            description=contract.DESCRIPTIONS[name],
            annotations=hints.model_copy(update={"title": title}),
            structured_output=True,
            arguments=READ_REQUESTS.get(name),
        )
    server.resource(
        RULES_URI,
        name="rules",
        title="Team rules",
        description=contract.RULES_RESOURCE,
        mime_type="application/json",
    )(rules_resource)
    # Issue 38: the prompts, and the resource templates a memory and a scope.
    add_prompts(server)
    add_resources(server)
    # The initialization answer carries the rules of the caller's scopes after the instructions.
    server._lowlevel_server.middleware.append(RulesInInstructions())
    return server
