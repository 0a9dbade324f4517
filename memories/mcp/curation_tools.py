"""The MCP tools that curate a scope: move_memories, share, promote_rule, reject_rule,
import_memory and benchmark_memory. Like the other tools they validate, obtain what they act on
through the access module or a selector built on it, call the same service as the REST view,
and shape the answer."""

from __future__ import annotations

import binascii
import io
from base64 import b64decode
from collections.abc import Callable
from typing import Annotated, Any, Literal

from django.conf import settings
from django.utils.translation import gettext as _
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from memories import selectors
from memories.capture.importer import SOURCE_TOOLS, memory_import
from memories.capture.schemas import ImportedOut
from memories.mcp.server import memory_to_change, named, run_tool
from memories.portability.archive import read_archive
from memories.portability.archive_import import archive_import
from memories.portability.schemas import ArchiveImportOut
from memories.portability.service import spool_upload
from memories.recall import benchmark
from memories.recall.inputs import MAX_K, MAX_QUERY_CHARS
from memories.rules import decisions
from memories.rules import selectors as rule_selectors
from memories.rules.candidates import rule_nominate
from memories.rules.schemas import RuleOut
from memories.schemas import BenchmarkOut, MoveOut, RelocatedOut
from memories.services import relocate
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ValidationFailed

Id = Annotated[str, Field(max_length=40)]
ToScope = Annotated[str, Field(max_length=40, description="A scope id you may write.")]
# Base64 of an archive as large as an MCP request may carry (ZM_MAX_BODY_BYTES for the whole
# JSON-RPC body); larger archives go through REST's import, which takes ZM_IMPORT_MAX_BYTES.
MAX_ARCHIVE_CHARS = settings.MAX_BODY_BYTES


async def move_memories(
    ctx: Context,
    memory_ids: Annotated[
        list[Id], Field(max_length=relocate.MAX_MOVE, description="Memories you may write.")
    ],
    to_scope: ToScope,
    confirm: Annotated[
        bool, Field(strict=True, description="true: you mean to move them all.")
    ] = False,
) -> Annotated[CallToolResult, MoveOut]:
    def work(actor: Actor) -> MoveOut:
        if not confirm:
            raise ValidationFailed(
                "confirm", _("A move changes where memories live: send confirm: true.")
            )
        memories = [
            named("memory_ids", lambda i=i: selectors.memory_for_write(actor=actor, public_id=i))
            for i in memory_ids
        ]
        to = named("to_scope", lambda: access.writable_scope(actor, to_scope))
        moved = relocate.memory_move(actor=actor, memories=memories, to=to)
        return MoveOut(to_scope=to.public_id, results=[RelocatedOut.of(m) for m in moved])

    return await run_tool(ctx, work)


async def share(
    ctx: Context,
    memory_id: Annotated[str, Field(max_length=40, description="A memory you can read.")],
    to_scope: ToScope,
) -> Annotated[CallToolResult, RelocatedOut]:
    def work(actor: Actor) -> RelocatedOut:
        memory = named(
            "memory_id", lambda: selectors.memory_for_read(actor=actor, public_id=memory_id)
        )
        access.require_write_access(actor)  # a read-only credential hears so, whatever the scope
        to = named("to_scope", lambda: access.writable_scope(actor, to_scope))
        return RelocatedOut.of(relocate.memory_share(actor=actor, memory=memory, to=to))

    return await run_tool(ctx, work)


async def promote_rule(
    ctx: Context,
    memory_id: Annotated[str, Field(max_length=40, description="A memory you may write.")],
) -> Annotated[CallToolResult, RuleOut]:
    def work(actor: Actor) -> RuleOut:
        return RuleOut.of(rule_nominate(memory=memory_to_change(actor, memory_id)))

    return await run_tool(ctx, work)


async def reject_rule(
    ctx: Context,
    rule_id: Annotated[str, Field(max_length=40, description="A rule id of a scope you admin.")],
) -> Annotated[CallToolResult, RuleOut]:
    def work(actor: Actor) -> RuleOut:
        rule = named(
            "rule_id", lambda: rule_selectors.rule_for_admin(actor=actor, public_id=rule_id)
        )
        decisions.rule_reject(actor=actor, rule=rule)
        return RuleOut.of(rule_selectors.rule_for_admin(actor=actor, public_id=rule_id))

    return await run_tool(ctx, work)


class ImportToolOut(BaseModel):
    scope: str
    archive: ArchiveImportOut | None = None  # an export archive's outcome
    pieces: list[ImportedOut] | None = None  # a markdown file's, piece by piece


def _archive(actor: Actor, scope: Any, encoded: str) -> ArchiveImportOut:
    """An export archive sent as base64, imported as `POST /scopes/{id}/import-export` does,
    within the same per-request budgets."""
    try:
        raw = b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationFailed("archive_base64", _("Not base64.")) from None
    try:
        with spool_upload(io.BytesIO(raw), declared=len(raw)) as upload:
            archive = read_archive(upload, max_total=settings.IMPORT_MAX_REQUEST_BYTES)
        result = archive_import(
            actor=actor, scope=scope, archive=archive, budget=settings.IMPORT_MAX_EMBED_CHARS
        )
    except ValidationFailed as exc:
        raise exc.naming("archive_base64") from None
    return ArchiveImportOut.of(scope=scope.public_id, result=result)


def _markdown(actor: Actor, scope: Any, content: str, tool: str, path: str) -> list[ImportedOut]:
    """A markdown file, imported as `POST /import` does (each piece answered on its own)."""
    try:
        pieces = memory_import(
            actor=actor, source_tool=tool, source_path=path, content=content, scope=scope.public_id
        )
    except ValidationFailed as exc:
        raise (exc.naming("markdown") if exc.field == "content" else exc) from None
    return [ImportedOut(**vars(piece)) for piece in pieces]


async def import_memory(
    ctx: Context,
    scope: Annotated[str, Field(max_length=40, description="A scope id you may write.")],
    archive_base64: Annotated[str | None, Field(max_length=MAX_ARCHIVE_CHARS)] = None,
    markdown: Annotated[str | None, Field(max_length=settings.MAX_CHUNK_CHARS)] = None,
    source_tool: Literal[SOURCE_TOOLS] = "claude-md",
    source_path: Annotated[str, Field(min_length=1, max_length=1000)] = "MEMORY.md",
) -> Annotated[CallToolResult, ImportToolOut]:
    def work(actor: Actor) -> ImportToolOut:
        if (archive_base64 is None) == (markdown is None):
            raise ValidationFailed("markdown", _("Send archive_base64 or markdown, not both."))
        found = named("scope", lambda: access.writable_scope(actor, scope))
        if archive_base64 is not None:
            archive = _archive(actor, found, archive_base64)
            return ImportToolOut(scope=found.public_id, archive=archive)
        pieces = _markdown(actor, found, markdown, source_tool, source_path)
        return ImportToolOut(scope=found.public_id, pieces=pieces)

    return await run_tool(ctx, work)


class CaseIn(BaseModel):
    question: Annotated[str, Field(max_length=MAX_QUERY_CHARS, description="In English.")]
    expected_ids: Annotated[
        list[Id],
        Field(max_length=benchmark.MAX_EXPECTED, description="Memories that should answer it."),
    ]


async def benchmark_memory(
    ctx: Context,
    scope: Annotated[str, Field(max_length=40, description="A scope id you can read.")],
    cases: Annotated[list[CaseIn], Field(max_length=benchmark.MAX_CASES)],
    k: Annotated[int, Field(strict=True, ge=1, le=MAX_K)] = 10,
) -> Annotated[CallToolResult, BenchmarkOut]:
    def work(actor: Actor) -> BenchmarkOut:
        found = named("scope", lambda: access.readable_scope(actor, scope))
        asked = [benchmark.Case(question=c.question, expected_ids=c.expected_ids) for c in cases]
        return BenchmarkOut.of(
            benchmark.scope_benchmark(actor=actor, scope=found, cases=asked, k=k)
        )

    return await run_tool(ctx, work)


def _hints(*, read: bool = False, destructive: bool = False, idempotent: bool = False):
    return ToolAnnotations(
        read_only_hint=read,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


CURATION_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (move_memories, "Move memories", _hints(destructive=True)),
    (share, "Share a memory", _hints()),
    (promote_rule, "Nominate a rule", _hints(idempotent=True)),
    (reject_rule, "Reject a rule", _hints(destructive=True)),
    (import_memory, "Import memories", _hints()),
    (benchmark_memory, "Benchmark recall", _hints(read=True, idempotent=True)),
]
