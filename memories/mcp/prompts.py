"""The MCP prompts: `brief` (open a session on a task), `receipt` (what a conversation used and
wrote) and `triage` (walk the review queue). Each renders the answer of the tool that reads
the same thing (build_context, session_receipt, list_conflicts) as the text of one user
message, read through the same door as the tools (`read_as_actor`): a scope the caller cannot
read answers the tools' not-found error, as a JSON-RPC error, never content.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from memories.hygiene import selectors as queue
from memories.hygiene.schemas import ConflictMemoryOut, ConflictOut
from memories.insights import sessions
from memories.mcp.server import read_as_actor
from memories.models import ConflictStatus
from memories.recall import context, inputs
from zeromemory.core.actor import Actor
from zeromemory.core.paging import Page

TRIAGE_PAGE = 20

BRIEF = (
    "Open a session on a task: the briefing for it (the team rules, the memories relevant to the "
    "task, recent decisions and open questions) in one scope or every scope you read."
)
RECEIPT = (
    "What a conversation used from memory and gave to it: memories recalled and written, tokens "
    "delivered, conflicts raised."
)
TRIAGE = (
    "Walk the review queue: the open conflicts of the scopes you administer (or of one), each "
    "with both memories and how to resolve it."
)

ScopeArgument = Annotated[
    str | None, Field(description="A scope id from list_scopes; omit for every scope you read.")
]


async def brief(
    ctx: Context,
    task: Annotated[str, Field(description="What the session is about to do, in English.")],
    scope: ScopeArgument = None,
) -> str:
    def work(actor: Actor) -> str:
        found = context.build_context(
            actor=actor,
            topic=task,
            max_tokens=inputs.DEFAULT_TOKENS,
            scopes=[scope] if scope else None,
        ).answer()
        return (
            f"You are starting a session on this task: {task}\n\n"
            "What zero-memory knows for it follows; follow the team rules, and after the task "
            "call mark_used with the ids of the memories you used.\n\n"
            f"{found.markdown}"
        )

    return await read_as_actor(ctx, work)


async def receipt(
    ctx: Context,
    conversation_id: Annotated[str, Field(description="The conversation (session) id.")],
) -> str:
    def work(actor: Actor) -> str:
        answer = sessions.session_receipt(actor=actor, conversation_id=conversation_id)
        figures = json.dumps(answer.model_dump(mode="json"), ensure_ascii=False)
        return f"{answer.line}\n\n{figures}"

    return await read_as_actor(ctx, work)


def _side(label: str, memory: ConflictMemoryOut | None) -> str:
    if memory is None:
        return ""
    content = " ".join(memory.content.split())
    return f"\n  {label} {memory.id} [{memory.kind}, {memory.author_kind}]: {content}"


def _item(item: ConflictOut) -> str:
    verdict = item.verdict or "not judged yet"
    confidence = f" ({item.confidence:.2f})" if item.confidence is not None else ""
    why = f"\n  Why: {' '.join(item.rationale.split())}" if item.rationale else ""
    return (
        f"- {item.id} in scope {item.scope}: {verdict}{confidence}"
        f"{_side('A', item.memory_a)}{_side('B', item.memory_b)}{why}"
    )


async def triage(ctx: Context, scope: ScopeArgument = None) -> str:
    def work(actor: Actor) -> str:
        filters = queue.ConflictFilters(scope=scope, status=ConflictStatus.OPEN)
        found, next_cursor = queue.conflict_list(
            actor=actor, filters=filters, page=Page(None, TRIAGE_PAGE)
        )
        if not found:
            return "The review queue is empty: no open conflicts in the scopes you administer."
        items = "\n".join(_item(ConflictOut.of(conflict)) for conflict in found)
        more = (
            f"\n\nMore items wait: call list_conflicts with cursor {next_cursor}."
            if next_cursor
            else ""
        )
        return (
            "Walk this review queue one item at a time. For each, read both memories, check "
            "which is true now (the code, a command's output, a newer decision), then call "
            "resolve_conflict with its conflict_id and one action: keep_both, a_supersedes_b, "
            "b_supersedes_a, merge, forget_a, forget_b or dismiss (a challenge takes keep_both, "
            "forget_a or dismiss). Nothing is deleted; undo reverses a resolution. Ask the user "
            f"when you cannot tell.\n\n{items}{more}"
        )

    return await read_as_actor(ctx, work)


def add_prompts(server: Any) -> None:
    """Register the prompts on `server`."""
    server.prompt(name="brief", title="Brief a session", description=BRIEF)(brief)
    server.prompt(name="receipt", title="Session receipt", description=RECEIPT)(receipt)
    server.prompt(name="triage", title="Triage the review queue", description=TRIAGE)(triage)
