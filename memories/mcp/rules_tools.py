"""Usage feedback and rules over MCP: the tool `mark_used`, the resource `zm://rules`, and the
team rules the server's instructions carry at initialization (a server middleware)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Annotated, Any

from asgiref.sync import sync_to_async
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from memories.approved_rules import approved_rules
from memories.feedback import Wrong
from memories.feedback import mark_used as feedback_mark_used
from memories.mcp import contract
from memories.mcp.auth import current_credential
from memories.mcp.server import read_as_actor, run_tool
from memories.rules.schemas import RuleOut, RulesOut, UsedOut
from memories.rules.usage import MAX_IDS
from scopes import access
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.outage import orm_call

logger = logging.getLogger(__name__)

RULES_URI = "zm://rules"
HANDSHAKES = ("initialize", "server/discover")


class WrongIn(BaseModel):
    memory_id: Annotated[str, Field(max_length=40)]
    reason: Annotated[str, Field(max_length=2000, description="Why it is wrong, in English.")]


async def mark_used(
    ctx: Context,
    memory_ids: Annotated[
        list[Annotated[str, Field(max_length=40)]],
        Field(max_length=MAX_IDS, description="Ids of the memories you actually used."),
    ],
    wrong: Annotated[
        list[WrongIn] | None,
        Field(max_length=MAX_IDS, description="Memories you found wrong, each with why."),
    ] = None,
    conversation_id: Annotated[str | None, Field(max_length=200)] = None,
) -> Annotated[CallToolResult, UsedOut]:
    def work(actor: Actor) -> UsedOut:
        return feedback_mark_used(
            actor=actor,
            memory_ids=memory_ids,
            wrong=[Wrong(memory_id=w.memory_id, reason=w.reason) for w in wrong or []],
            conversation_id=conversation_id,
        )

    return await run_tool(ctx, work)


def _readable_rules(actor: Actor) -> list:
    return approved_rules(access.readable_scopes(actor).values_list("id", flat=True))


def _approved_answer(actor: Actor) -> RulesOut:
    return RulesOut(results=[RuleOut.of(rule) for rule in _readable_rules(actor)])


async def rules_resource() -> str:
    """The approved rules of the scopes this connection reads, as JSON; a refusal in the same
    shape as the other resources'."""
    answer = await read_as_actor(None, _approved_answer)
    return json.dumps(answer.model_dump(mode="json"), ensure_ascii=False)


def _rules_text(source: Callable[[], Any] | None) -> str:
    with orm_call():
        token = source() if source is not None else None
        if token is None:
            return ""
        actor = Actor(user=token.user, token=token, surface=Surface.MCP)
        return contract.rules_instructions(
            (rule.scope.name, rule.text) for rule in _readable_rules(actor)
        )


class RulesInInstructions:
    """Server middleware: the answer to `initialize` (and to `server/discover`, the handshake
    of the newer protocol) carries the team rules of the caller's scopes after the server's
    instructions. A failure to read them leaves the plain instructions."""

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        result = await call_next(ctx)
        if ctx.method not in HANDSHAKES or not isinstance(result, dict):
            return result
        try:
            read = sync_to_async(_rules_text, thread_sensitive=True)
            rules = await read(current_credential.get())
        except Exception:  # noqa: BLE001 - the session starts with the plain instructions
            logger.warning("the rules for the MCP instructions could not be read", exc_info=True)
            return result
        if not rules:
            return result
        instructions = "\n\n".join(part for part in (result.get("instructions"), rules) if part)
        return {**result, "instructions": instructions}


RULE_TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (
        mark_used,
        "Mark memories used",
        ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
]
