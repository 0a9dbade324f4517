"""The one way a call gets its activity row: `with activity_logged(...) as entry:` around the
work of recall, build_context, briefing, ingest and remember. The row is written after the block,
refused and failed calls included; the function keeps its own return type. An answered call's row
waits, outside a transaction, until the answer is on its way (`zeromemory.core.after_answer`),
and goes in with the process's next rows (`memories.activity.batched`)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connection

from memories.activity.log import elapsed_ms, log_activity, log_failure
from memories.activity.models import ActivityOperation, ActivityOutcome
from zeromemory.core import after_answer
from zeromemory.core.actor import Actor


@dataclass
class Entry:
    """What the call tells its row about the answer: the scopes it named, the results (ids and
    scores), the memories whose recall count it bumps, and the outcome when it is not simply
    hit or empty."""

    scopes: Sequence[str] = ()
    results: Sequence[dict[str, Any]] = ()
    recalled_ids: Sequence[int] = ()
    # of memory content handed out; or a function counting them, called when the row is written
    tokens: int | Callable[[], int] = 0
    searched_scopes: Sequence[int] = ()  # ids of the scopes a read searched
    outcome: str | None = None
    error_code: str = ""
    steps: dict[str, Any] = field(default_factory=dict)  # the read path's steps that shaped it

    def record(self, **answer: Any) -> None:
        for name, value in answer.items():
            setattr(self, name, value)


@contextmanager
def activity_logged(
    *,
    actor: Actor,
    operation: str,
    query: Any = "",
    scopes: Sequence[str] | None = None,
    options: dict[str, Any] | None = None,
) -> Iterator[Entry]:
    """One activity row for the block. `query`, `scopes` and `options` are the call's as sent
    (the query exactly as it arrived); a block that raises is logged as refused or failed."""
    started = time.perf_counter()
    asked = options or {}
    entry = Entry(scopes=scopes or [])
    try:
        yield entry
    except Exception as exc:
        log_failure(
            actor=actor,
            operation=operation,
            error=exc,
            started=started,
            query=query,
            scopes=scopes or [],
            options=asked,
        )
        raise
    latency_ms = elapsed_ms(started)

    def write(*, batched: bool = False) -> None:
        log_activity(
            batched=batched,
            actor=actor,
            operation=operation,
            query=query,
            scopes=entry.scopes,
            options=asked,
            results=entry.results,
            latency_ms=latency_ms,
            outcome=entry.outcome,
            error_code=entry.error_code,
            recalled_ids=entry.recalled_ids,
            tokens=entry.tokens() if callable(entry.tokens) else entry.tokens,
            searched_scopes=entry.searched_scopes,
            steps=entry.steps,
        )

    # Inside a caller's transaction the row is part of it, written now; otherwise it is made
    # once the answer is on its way (zeromemory.core.after_answer), with the same values, and
    # written with the process's next rows (`memories.activity.batched`). Where nothing waits
    # for the answer to be on its way, it is written at once.
    if connection.in_atomic_block or not after_answer.collecting():
        write()
    else:
        after_answer.defer(lambda: write(batched=True))


def logs_remember(function: Callable[..., list]) -> Callable[..., list]:
    """The batch remember service's row: the scopes written to and each item's id or error."""

    @functools.wraps(function)
    def wrapper(*, actor: Actor, requests: list, **kwargs: Any) -> list:
        scopes = sorted({r.scope for r in requests if isinstance(r.scope, str)})
        with activity_logged(
            actor=actor, operation=ActivityOperation.REMEMBER, scopes=scopes
        ) as entry:
            items = function(actor=actor, requests=requests, **kwargs)
            results, written_to = [], set(scopes)
            for item in items:
                if item.result is not None:
                    memory = item.result.memory
                    written_to.add(memory.scope.public_id)
                    results.append(
                        {"id": memory.public_id, "deduplicated": item.result.deduplicated}
                    )
                else:
                    results.append({"error": item.error.code})
            ok = any(item.result is not None for item in items)
            errors = sorted({item.error.code for item in items if item.error is not None})
            entry.record(
                scopes=sorted(written_to),
                results=results,
                outcome=ActivityOutcome.HIT if ok else ActivityOutcome.ERROR,
                error_code=errors[0] if errors and not ok else "",
            )
        return items

    return wrapper
