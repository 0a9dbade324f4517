"""The one place that talks to the Anthropic Messages API: a client from settings, and one call
with a forced tool whose input is the answer (translation, extraction, hygiene's judge).

Every failure becomes `LLMCallFailed` with a message a person can act on, whether another attempt
may succeed (`retryable`), and the wait the server asked for (`retry_after`); the callers' task
layers retry with backoff and count attempts, so the SDK's own retries are off.
"""

from __future__ import annotations

import email.utils
import functools
import os
import time
from dataclasses import dataclass
from typing import Any

import anthropic
from django.conf import settings

# Status codes worth another attempt later; the others (400, 401, 403, 404, 413, ...) mean the
# request or the configuration is wrong and will stay wrong.
_RETRYABLE_CLIENT_STATUSES = frozenset({408, 409, 429})
_MAX_DETAIL_CHARS = 200


class LLMCallFailed(Exception):
    """A call that produced no usable tool input."""

    def __init__(
        self, message: str, *, retryable: bool = True, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class ToolCall:
    input: dict[str, Any]
    input_tokens: int
    output_tokens: int


def anthropic_client(*, timeout: float | None = None) -> anthropic.Anthropic | None:
    """A client configured from settings, or None when no ANTHROPIC_API_KEY is configured.

    One client per process and configuration, kept: its connections (and their TLS sessions)
    serve the next call, and building a client loads the CA bundle, which costs more CPU than
    the rest of a call on this side. Keyed by the settings it reads, so a key or URL changed in
    settings (or by a test) takes effect on the next call, and by the process, so a forked task
    process never shares its parent's connections.
    """
    api_key = settings.ANTHROPIC_API_KEY
    if not api_key:
        return None
    return _client(
        api_key=api_key,
        # None lets the SDK fall back to its default endpoint.
        base_url=settings.ANTHROPIC_BASE_URL or None,
        timeout=float(timeout if timeout is not None else settings.TRANSLATOR_TIMEOUT_SECONDS),
        pid=os.getpid(),
    )


@functools.lru_cache(maxsize=8)
def _client(*, api_key: str, base_url: str | None, timeout: float, pid: int) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)


def call_tool(
    *,
    model: str,
    system: str,
    user: str,
    tool: dict[str, Any],
    max_tokens: int,
    timeout: float,
) -> ToolCall:
    """One Messages API call that must answer by calling `tool`; its input is the answer."""
    client = anthropic_client(timeout=timeout)
    if client is None:
        # Not retryable by backoff: nothing changes until someone configures a key.
        raise LLMCallFailed("ANTHROPIC_API_KEY is not set", retryable=False)
    try:
        message = client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": user}],
            tools=[tool],
            tool_choice={"type": "tool", "name": tool["name"]},
        )
    except anthropic.APITimeoutError as exc:
        raise LLMCallFailed(
            f"the Anthropic API did not answer within {timeout:g} s (timeout)"
        ) from exc
    except anthropic.APIConnectionError as exc:
        raise LLMCallFailed(f"could not reach the Anthropic API: {exc.message}") from exc
    except anthropic.APIStatusError as exc:
        raise _status_failure(exc) from exc
    except anthropic.AnthropicError as exc:
        raise LLMCallFailed(
            f"the Anthropic API call failed: {type(exc).__name__}: {shorten(str(exc))}"
        ) from exc
    except ValueError as exc:
        # A 200 declared as JSON whose body does not parse (a proxy's error page, a cut body).
        raise LLMCallFailed("the Anthropic API answered with a body that is not JSON") from exc
    return ToolCall(
        input=_tool_input(message, tool["name"]),
        input_tokens=_usage(message, "input_tokens"),
        output_tokens=_usage(message, "output_tokens"),
    )


def _usage(message: object, name: str) -> int:
    value = getattr(getattr(message, "usage", None), name, 0)
    return value if isinstance(value, int) else 0


def _tool_input(message: object, tool_name: str) -> dict[str, Any]:
    """The input of the forced tool call, or LLMCallFailed on any other shape of answer."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        raise LLMCallFailed("the Anthropic API answered with something that is not a message")
    stop_reason = getattr(message, "stop_reason", None)
    if stop_reason == "max_tokens":
        raise LLMCallFailed("the answer was cut off at the output token limit")
    call = next(
        (
            block
            for block in content
            if getattr(block, "type", None) == "tool_use"
            and getattr(block, "name", None) == tool_name
        ),
        None,
    )
    if call is None:
        raise LLMCallFailed(f"the answer has no {tool_name} tool call (stop_reason: {stop_reason})")
    arguments = getattr(call, "input", None)
    if not isinstance(arguments, dict):
        raise LLMCallFailed(f"the {tool_name} tool input is not an object")
    return arguments


def _status_failure(exc: anthropic.APIStatusError) -> LLMCallFailed:
    status = exc.status_code
    detail = shorten(exc.api_message or str(exc))
    retry_after = _retry_after_seconds(exc.response.headers)
    if status == 429:
        return LLMCallFailed(
            f"the Anthropic API is rate limiting (429): {detail}", retry_after=retry_after
        )
    if status >= 500:
        return LLMCallFailed(
            f"the Anthropic API failed with {status}: {detail}", retry_after=retry_after
        )
    return LLMCallFailed(
        f"the Anthropic API refused the request with {status}: {detail}",
        retryable=status in _RETRYABLE_CLIENT_STATUSES,
        retry_after=retry_after,
    )


def _retry_after_seconds(headers: Any) -> float | None:
    """The wait a retry-after header asks for: seconds, or an HTTP date."""
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(raw)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def shorten(value: str, limit: int = _MAX_DETAIL_CHARS) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"
