"""The scripted answers of the fake Anthropic Messages API (`tests.fakes.anthropic_api`): a
`Step` turns the recorded request into a `Reply` (a tool call, a text, an error status, raw bytes,
a delay)."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_TOOL_NAME = "record_english_text"
MESSAGES_PATH = "/v1/messages"

# The error types the real API puts in {"type": "error", "error": {"type": ...}}.
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

request_ids = itertools.count(1)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # the parsed body, None when it is not JSON


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]


@dataclass(frozen=True)
class Step:
    """One scripted answer. `answer` gets the request and an event set when the server stops."""

    name: str
    answer: Callable[[RecordedRequest, threading.Event], Reply]

    def __repr__(self) -> str:
        return f"<Step {self.name}>"


# --- steps ----------------------------------------------------------------------------------


def tool_answer(english: str) -> Step:
    """A proper tool-use message whose input is {"english": english}."""
    return Step(f"tool_answer({english!r})", lambda request, _: _tool_use(request, english))


def tool_answer_from(fn: Callable[[Any], str]) -> Step:
    """A tool-use message whose English is fn(request_json), e.g. to echo a part of the prompt."""
    return Step(
        f"tool_answer_from({getattr(fn, '__name__', fn)})",
        lambda request, _: _tool_use(request, fn(request.json)),
    )


def malformed_tool_input(input_obj: Any) -> Step:
    """A tool-use message whose input is `input_obj` as given (no "english", not a string...)."""
    return Step(
        f"malformed_tool_input({input_obj!r})",
        lambda request, _: _message(
            request,
            [_tool_use_block(request, input_obj)],
            stop_reason="tool_use",
        ),
    )


def memories_answer(memories: list[dict[str, Any]]) -> Step:
    """A proper record_memories tool call (the extractor's) proposing these memories."""
    return Step(
        f"memories_answer({len(memories)} memories)",
        lambda request, _: _message(
            request, [_tool_use_block(request, {"memories": memories})], stop_reason="tool_use"
        ),
    )


def memories_answer_from(fn: Callable[[Any], list[dict[str, Any]]]) -> Step:
    """A record_memories call whose memories are fn(request_json), e.g. built from the chunk."""
    return Step(
        f"memories_answer_from({getattr(fn, '__name__', fn)})",
        lambda request, _: _message(
            request, [_tool_use_block(request, {"memories": fn(request.json)})], "tool_use"
        ),
    )


def text_only(text: str) -> Step:
    """A message with a text block and no tool call."""
    return Step(
        f"text_only({text!r})",
        lambda request, _: _message(
            request, [{"type": "text", "text": text}], stop_reason="end_turn"
        ),
    )


def status(code: int, body: Any = None, headers: dict[str, str] | None = None) -> Step:
    """An HTTP error (or any status). Without a body, an Anthropic-style error JSON.

    A dict or list body is sent as JSON; str or bytes as given, as text/plain unless `headers`
    names another content-type.
    """
    if body is None:
        body = error_body(code, f"fake Anthropic API answered {code}")
    if isinstance(body, dict | list):
        payload, content_type = json.dumps(body).encode(), "application/json"
    else:
        payload = body.encode() if isinstance(body, str) else bytes(body)
        content_type = "text/plain; charset=utf-8"
    reply_headers = {"content-type": content_type, **(headers or {})}
    reply = Reply(code, payload, reply_headers)
    return Step(f"status({code})", lambda request, _: reply)


def raw(body_bytes: bytes, status: int = 200, content_type: str = "application/json") -> Step:
    """`body_bytes` as the body, verbatim (for bodies that are not JSON at all)."""
    reply = Reply(status, body_bytes, {"content-type": content_type})
    return Step(f"raw({body_bytes[:40]!r}, status={status})", lambda request, _: reply)


def delay(seconds: float, then: Step | None = None) -> Step:
    """Sleep `seconds` before answering with `then` (to run past the client's timeout).

    The wait ends early when the server stops, so a slow step never holds up the teardown.
    """
    follow = then if then is not None else tool_answer("(delayed answer)")

    def answer(request: RecordedRequest, stopping: threading.Event) -> Reply:
        stopping.wait(seconds)
        return follow.answer(request, stopping)

    return Step(f"delay({seconds}, then={follow.name})", answer)


def error_body(code: int, message: str) -> dict[str, Any]:
    """The error JSON the real API sends with a 4xx or 5xx."""
    error_type = _ERROR_TYPES.get(code, "api_error" if code >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _tool_name(request: RecordedRequest) -> str:
    """The tool the request forced, else its first tool, else the translator's tool name."""
    data = request.json if isinstance(request.json, dict) else {}
    choice = data.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("name"), str):
        return choice["name"]
    tools = data.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict):
        return str(tools[0].get("name", DEFAULT_TOOL_NAME))
    return DEFAULT_TOOL_NAME


def _tool_use_block(request: RecordedRequest, input_obj: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_fake{next(request_ids):08d}",
        "name": _tool_name(request),
        "input": input_obj,
    }


def _tool_use(request: RecordedRequest, english: str) -> Reply:
    return _message(request, [_tool_use_block(request, {"english": english})], "tool_use")


def _message(request: RecordedRequest, content: list[Any], stop_reason: str) -> Reply:
    data = request.json if isinstance(request.json, dict) else {}
    body = {
        "id": f"msg_fake{next(request_ids):08d}",
        "type": "message",
        "role": "assistant",
        "model": data.get("model") or "claude-fake",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            # Rough counts, for shape only.
            "input_tokens": max(1, len(request.body) // 4),
            "output_tokens": max(1, len(json.dumps(content)) // 4),
        },
    }
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


def step_failed(step: Step, exc: Exception) -> Reply:
    body = error_body(500, f"fake Anthropic API: step {step.name} raised {exc!r}")
    return Reply(500, json.dumps(body).encode(), {"content-type": "application/json"})


SCRIPT_EXHAUSTED = status(500, error_body(500, "fake Anthropic API: script exhausted"))
