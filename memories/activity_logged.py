"""Decorators that give reads and writes their activity row: one per call of recall,
build_context, briefing, ingest (`logs_read`) and remember (`logs_remember`), refused and failed
calls included, written after the call."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memories.activity import elapsed_ms, log_activity, log_failure
from memories.models import ActivityOperation, ActivityOutcome
from zeromemory.core.actor import Actor


@dataclass(frozen=True)
class Logged:
    """What a read hands the activity log besides its answer: the scopes it named, the
    results (ids and scores), and the memories whose recall count it bumps."""

    scopes: Sequence[str]
    results: Sequence[dict[str, Any]]
    recalled_ids: Sequence[int] = ()


def _no_options(arguments: dict[str, Any]) -> dict[str, Any]:
    return {}


def _no_query(arguments: dict[str, Any]) -> str:
    return ""


def _asked_scopes(arguments: dict[str, Any]) -> Sequence[str]:
    return arguments.get("scopes") or []


def logs_read(
    operation: str,
    *,
    query: Callable[[dict[str, Any]], str] = _no_query,
    options: Callable[[dict[str, Any]], dict[str, Any]] = _no_options,
    scopes: Callable[[dict[str, Any]], Sequence[str]] = _asked_scopes,
) -> Callable[[Callable[..., tuple[Any, Logged]]], Callable[..., Any]]:
    """One activity row per call of the decorated read, refused and failed calls included.

    The read returns `(answer, Logged)`; its callers get the answer. `query`, `options` and
    `scopes` say what the row records of the call's keyword arguments (the query exactly as sent).
    """

    def decorate(function: Callable[..., tuple[Any, Logged]]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*, actor: Actor, **arguments: Any) -> Any:
            started = time.perf_counter()
            text, asked = query(arguments), options(arguments)
            try:
                answer, logged = function(actor=actor, **arguments)
            except Exception as exc:
                log_failure(
                    actor=actor,
                    operation=operation,
                    error=exc,
                    started=started,
                    query=text,
                    scopes=scopes(arguments),
                    options=asked,
                )
                raise
            log_activity(
                actor=actor,
                operation=operation,
                query=text,
                scopes=logged.scopes,
                options=asked,
                results=logged.results,
                latency_ms=elapsed_ms(started),
                recalled_ids=logged.recalled_ids,
            )
            return answer

        return wrapper

    return decorate


def logs_remember(function: Callable[..., list]) -> Callable[..., list]:
    """Decorate the batch remember service: one activity row per call, written after it."""

    @functools.wraps(function)
    def wrapper(*, actor: Actor, requests: list, **kwargs: Any) -> list:
        started = time.perf_counter()
        scopes = sorted({r.scope for r in requests if isinstance(r.scope, str)})
        try:
            items = function(actor=actor, requests=requests, **kwargs)
        except Exception as exc:
            log_failure(
                actor=actor,
                operation=ActivityOperation.REMEMBER,
                error=exc,
                started=started,
                scopes=scopes,
            )
            raise
        results, written_to = [], set(scopes)
        for item in items:
            if item.result is not None:
                memory = item.result.memory
                written_to.add(memory.scope.public_id)
                results.append({"id": memory.public_id, "deduplicated": item.result.deduplicated})
            else:
                results.append({"error": item.error.code})
        ok = any(item.result is not None for item in items)
        errors = sorted({item.error.code for item in items if item.error is not None})
        log_activity(
            actor=actor,
            operation=ActivityOperation.REMEMBER,
            scopes=sorted(written_to),
            results=results,
            latency_ms=elapsed_ms(started),
            outcome=ActivityOutcome.HIT if ok else ActivityOutcome.ERROR,
            error_code=errors[0] if errors and not ok else "",
        )
        return items

    return wrapper
