"""How an MCP tool call runs: as whom, in which thread, and how its answer and errors look.

The ORM is synchronous, so each tool is an async function that hands its work to
`sync_to_async(thread_sensitive=True)`: the work runs in the one thread Django's ASGI handler also
uses for synchronous code, where connections are opened, reused and (as at the start and end of a
Django request) closed when stale. The SDK's alternative, a plain function run on an anyio worker
thread, would give each of up to 40 worker threads a connection that nothing ever closes. The
async part only reads the MCP request context (the client info).

The actor is the token's user on surface "mcp", with the client name from the client info the
MCP client sent when it connected (never from a tool argument); the services log the activity
with both. Answers are structured content plus the same JSON as a text block. Failures are tool
errors (`isError`) with the stable code of the API contract and a message a model can act on;
never a traceback. An error is the envelope as its text block alone: a client checks any
structured content against the tool's output schema (the TypeScript SDK throws on a mismatch
instead of handing the result to its agent), and the envelope is no answer of the tool.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from asgiref.sync import sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    ResourceLink,
    TextContent,
    Tool,
)
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import BaseModel, ValidationError

from memories import selectors
from memories.kinds import kind_slugs
from memories.mcp import contract
from memories.mcp.auth import current_credential
from memories.models import Memory
from zeromemory.core import foreground
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.errors import DomainError, NotFound, RateLimited, Unauthorized, error_body
from zeromemory.core.outage import orm_call
from zeromemory.core.routing import noting_writes
from zeromemory.core.throttling import retry_after

logger = logging.getLogger(__name__)

# Every tool takes an optional `conversation_id` (the agent's session); `call_tool` reads it here,
# the one place, and the actor carries it to the activity row and the session receipt.
CONVERSATION_ID = "conversation_id"
CONVERSATION_ID_SCHEMA = {
    "type": "string",
    "maxLength": 200,
    "description": "Your conversation (session) id; pass the same one on every call of a session.",
}
current_conversation: ContextVar[str] = ContextVar("current_conversation", default="")

SERVER_FAULTS = ("internal", "unavailable")
INTERNAL_MESSAGE = "Something went wrong on the server. Try again later; if it persists, report it."


def _text(data: dict[str, Any]) -> list[TextContent]:
    return [TextContent(type="text", text=json.dumps(data, ensure_ascii=False))]


def ok_result(data: dict[str, Any], links: Sequence[ResourceLink] = ()) -> CallToolResult:
    """The answer as structured content and JSON text, then `links` (resource links to the
    memories it names): content blocks, so the output schema (of the structured content) holds."""
    return CallToolResult(content=[*_text(data), *links], structured_content=data)


def error_result(code: str, message: str, details: Any = None) -> CallToolResult:
    return CallToolResult(content=_text(error_body(code, message, details)), is_error=True)


def client_name(ctx: Context) -> str:
    """`name/version` from the client info the request carries (stdio's handshake, or the
    envelope of a self-contained request); else the User-Agent of the HTTP request, since the
    stateless endpoint keeps no handshake between requests ("" when there is neither)."""
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError):
        params = None
    info = params.client_info if params is not None else None
    if info is not None:
        name, version = (info.name or "").strip(), (info.version or "").strip()
        return (f"{name}/{version}" if name and version else name)[:120]
    try:
        headers = ctx.headers or {}
    except (AttributeError, ValueError):
        return ""
    return " ".join(str(headers.get("user-agent", "")).split())[:120]


def named(field: str, find: Callable[[], Any]) -> Any:
    """`find()`, with a not-found refusal naming the tool argument `field`."""
    try:
        return find()
    except NotFound as exc:
        raise exc.naming(field) from None


def memory_to_change(actor: Actor, memory_id: str) -> Memory:
    """A memory the caller may write, or a refusal naming `memory_id`."""
    return named("memory_id", lambda: selectors.memory_for_write(actor=actor, public_id=memory_id))


def _throttle(actor: Actor) -> None:
    """The REST API's per-user rate, shared with it: one budget per user across surfaces."""
    wait = retry_after(actor.user)
    if wait is not None:
        raise RateLimited(
            f"Too many requests; wait {math.ceil(wait)} s before the next call.",
            details={"retry_after": wait},
        )


def call_as_actor(
    source: Callable[[], Any] | None,
    client: str,
    conversation: str,
    work: Callable[[Actor], dict[str, Any]],
) -> dict[str, Any]:
    # A tool call counts as a request someone waits on, as a REST request does (its middleware).
    with foreground.interactive(), orm_call():
        token = source() if source is not None else None
        if token is None:
            raise Unauthorized("The token is not valid: unknown, revoked or expired.")
        actor = Actor(
            user=token.user,
            token=token,
            surface=Surface.MCP,
            client_name=client,
            conversation_id=conversation,
        )
        _throttle(actor)
        with noting_writes(actor.user):
            return work(actor)


async def run_tool(
    ctx: Context,
    work: Callable[[Actor], BaseModel | dict[str, Any]],
    links: Callable[[dict[str, Any]], list[ResourceLink]] | None = None,
) -> CallToolResult:
    """Run `work(actor)` in the ORM thread; map domain errors to tool errors. `links(answer)`
    adds resource links to the answer's memories."""
    call = sync_to_async(call_as_actor, thread_sensitive=True)
    try:
        answer = await call(
            current_credential.get(), client_name(ctx), current_conversation.get(), work
        )
        data = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    except DomainError as exc:
        return error_result(exc.code, exc.message, exc.details)
    except Exception:
        logger.exception("an MCP tool failed")
        return error_result("internal", INTERNAL_MESSAGE)
    return ok_result(data, links(data) if links is not None else ())


def protocol_error(code: str, message: str, details: Any = None) -> MCPError:
    """A prompt's or resource's refusal: a JSON-RPC error (those answers have no error flag),
    invalid params unless the server failed, the stable code leading its message and the
    error envelope as its data."""
    number = INTERNAL_ERROR if code in SERVER_FAULTS else INVALID_PARAMS
    return MCPError(number, f"{code}: {message}", data=error_body(code, message, details))


async def read_as_actor(ctx: Context | None, work: Callable[[Actor], Any]) -> Any:
    """`work(actor)` for a prompt or a resource, through the same door as a tool (the token's
    user, its throttle, the access module); a refusal is a `protocol_error`, never content."""
    call = sync_to_async(call_as_actor, thread_sensitive=True)
    try:
        client = client_name(ctx) if ctx is not None else ""
        return await call(current_credential.get(), client, "", work)
    except DomainError as exc:
        raise protocol_error(exc.code, exc.message, exc.details) from None
    except MCPError:
        raise
    except Exception:
        logger.exception("an MCP prompt or resource failed")
        raise protocol_error("internal", INTERNAL_MESSAGE) from None


def _invalid_arguments(exc: ValidationError) -> tuple[str, dict[str, list[str]]]:
    """The message and details of arguments the validation refused."""
    details: dict[str, list[str]] = {}
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "arguments"
        details.setdefault(field, []).append(error["msg"])
    field, messages = next(iter(details.items()))
    return f"{field}: {messages[0]}", details


def _argument_error(exc: ValidationError) -> CallToolResult:
    return error_result("validation_failed", *_invalid_arguments(exc))


def _unreadable_text(value: Any) -> str | None:
    """Why a string argument (at any depth) cannot be stored or searched, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "NUL characters are not allowed."
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "Not valid Unicode text (a lone surrogate)."
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _arguments_problem(
    allowed: set[str], arguments: dict[str, Any]
) -> tuple[str, dict[str, list[str]]] | None:
    """What REST refuses before any service runs: unknown fields, NUL and invalid text (the
    message and the details), or None."""
    details: dict[str, list[str]] = {}
    for field in arguments:
        if field not in allowed:
            details[field] = ["Unknown field."]
        elif (problem := _unreadable_text(arguments[field])) is not None:
            details[field] = [problem]
    if not details:
        return None
    field, messages = next(iter(details.items()))
    return f"{field}: {messages[0]}", details


def _arguments_error(allowed: set[str], arguments: dict[str, Any]) -> CallToolResult | None:
    problem = _arguments_problem(allowed, arguments)
    return None if problem is None else error_result("validation_failed", *problem)


class _Sent:
    """A tool's arguments as sent, handed to the tool whole (its `arguments` parameter)."""

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": self.arguments}


def _unchecked(model: type[BaseModel]) -> type[BaseModel]:
    """`model` as the SDK's arguments model: its fields still steer the SDK's pre-parsing (a
    list sent as a JSON string), but the SDK does not validate; the service does, with
    `model`, so a refusal is logged and answered like a REST one."""

    def model_validate(cls: type[BaseModel], obj: Any, *args: Any, **kwargs: Any) -> _Sent:
        return _Sent(dict(obj))

    return type(
        f"{model.__name__}Sent",
        (model,),
        {"__module__": model.__module__, "model_validate": classmethod(model_validate)},
    )


class ZeroMemoryServer(MCPServer):
    """MCPServer whose argument and lookup failures also answer in the stable error shape."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_arguments: dict[str, set[str]] = {}
        # Tools whose function takes `conversation_id` itself (remember, ingest keep it).
        self.takes_conversation: set[str] = set()

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str,
        arguments: type[BaseModel] | None = None,
        **kwargs: Any,
    ) -> None:
        """A tool from `fn(ctx, ...)`. With `arguments` (a read request of
        `memories.recall.inputs`), `fn(ctx, arguments)` gets the arguments as sent, and the
        tool's input schema is the model's: the service parses them with the model, once,
        inside the call's activity row, as it does a REST body."""
        parameters = [p for p in inspect.signature(fn).parameters if p != "ctx"]
        self.tool_arguments[name] = set(arguments.model_fields) if arguments else set(parameters)
        if arguments is None and CONVERSATION_ID in parameters:
            self.takes_conversation.add(name)
        super().add_tool(fn, name=name, **kwargs)
        if arguments is not None:
            tool = self._tool_manager.get_tool(name)
            tool.fn_metadata.arg_model = _unchecked(arguments)
            schema = arguments.model_json_schema(by_alias=True)
            # As every tool's schema: the conversation is listed for all of them (`list_tools`),
            # and unknown arguments are refused by `call_tool` rather than declared.
            schema["properties"].pop(CONVERSATION_ID, None)
            for key in ("additionalProperties", "description"):
                schema.pop(key, None)
            tool.parameters = {**schema, "title": f"{name}Arguments"}

    async def list_tools(self) -> list[Tool]:
        """The tools, their descriptions naming the kinds the catalogue has now."""
        try:
            kinds = await sync_to_async(kind_slugs, thread_sensitive=True)()
        except Exception:  # noqa: BLE001 - the tools are listed even without the catalogue
            logger.warning("the kinds catalogue could not be read to describe the tools")
            kinds = []
        tools = await super().list_tools()
        for tool in tools:
            tool.description = contract.described(tool.description or "", kinds)
            properties = tool.input_schema.setdefault("properties", {})
            properties.setdefault(CONVERSATION_ID, CONVERSATION_ID_SCHEMA)
        return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        allowed = self.tool_arguments.get(name)
        if allowed is not None and isinstance(arguments, dict):
            refused = _arguments_error(allowed | {CONVERSATION_ID}, arguments)
            if refused is not None:
                return refused
            conversation = arguments.get(CONVERSATION_ID)
            if conversation is not None and not (
                isinstance(conversation, str) and len(conversation) <= 200
            ):
                return error_result(
                    "validation_failed",
                    "conversation_id: a string of at most 200 characters.",
                    {CONVERSATION_ID: ["A string of at most 200 characters."]},
                )
            current_conversation.set(conversation or "")
            if name not in self.takes_conversation:
                arguments = {k: v for k, v in arguments.items() if k != CONVERSATION_ID}
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            logger.exception("the MCP tool %s failed", name)
            return error_result("internal", INTERNAL_MESSAGE)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return _argument_error(exc.__cause__)
            if name not in contract.DESCRIPTIONS:
                tools = ", ".join(contract.DESCRIPTIONS)
                return error_result("not_found", f"No tool named {name!r}. Tools: {tools}.")
            return error_result("validation_failed", str(exc))

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None
    ) -> GetPromptResult | InputRequiredResult:
        """A prompt; an unknown name or an argument the prompt refuses answers in the stable
        error shape (`protocol_error`)."""
        prompt = self._prompt_manager.get_prompt(name)
        if prompt is None:
            prompts = ", ".join(p.name for p in self._prompt_manager.list_prompts())
            raise protocol_error("not_found", f"No prompt named {name!r}. Prompts: {prompts}.")
        problem = _arguments_problem({a.name for a in prompt.arguments or []}, arguments or {})
        if problem is not None:
            raise protocol_error("validation_failed", *problem)
        try:
            return await super().get_prompt(name, arguments, context)
        except MCPError:
            raise
        except ValueError as exc:
            if isinstance(exc.__cause__, ValueError) and isinstance(
                exc.__cause__.__cause__, ValidationError
            ):
                raise protocol_error(
                    "validation_failed", *_invalid_arguments(exc.__cause__.__cause__)
                ) from None
            raise protocol_error("validation_failed", str(exc)) from None

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        """A resource; a URI that names none (or that the templates refuse, such as one with a
        NUL or a path step) answers not_found in the stable error shape."""
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError:
            raise protocol_error("not_found", f"No resource {str(uri)[:200]!r}.") from None
