"""mem0 (open source, 2.x): the JSON of `Memory.get_all()` — `{"results": [memory, ...]}` — or
the bare list its REST server answers `GET /memories` with.

The format is mem0's own (`mem0/memory/main.py`, `Memory.get_all` and `_get_all_from_vector_store`
of mem0ai 2.x): each memory is `{"id", "memory", "hash", "metadata", "created_at", "updated_at",
"user_id", "agent_id", "run_id", "actor_id", "role"}`. A memory may carry `"history"`: the rows
`Memory.history(id)` returns for it (`{"id", "memory_id", "old_memory", "new_memory", "event",
"created_at", "updated_at", "is_deleted"}`), which give validity: the memory is valid from its
last ADD or UPDATE, a DELETE ends it, and each text an UPDATE replaced becomes a memory of its
own, valid from when it was written until the update, linked from the memory that replaced it
(`relates_to`).

mem0 has no kinds; `metadata` may name one (`memory_type`, `category`, `categories`), mapped by
`KINDS` (anything else is a fact). Users, agents, runs, actors, roles, metadata and the hash are
kept as claims.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

from memories.portability.sources.jsonfile import (
    first_byte,
    identifier,
    json_items,
    not_the_system,
    text,
    when,
)
from memories.portability.sources.records import SkippedRecord, SourceRecord, SourceRelation

SYSTEM = "mem0"
MAX_HISTORY = 1000  # history rows of one memory kept in its claims

# mem0's words for a kind of memory (metadata) → ours.
KINDS = {
    "procedural_memory": "convention",
    "procedural": "convention",
    "semantic_memory": "fact",
    "episodic_memory": "episode",
    "episodic": "episode",
    "preference": "preference",
    "preferences": "preference",
    "decision": "decision",
    "task": "task",
    "tasks": "task",
    "reference": "reference",
}
_EARLY = datetime(1970, 1, 1, tzinfo=UTC)
_CLAIMED = ("hash", "user_id", "agent_id", "run_id", "actor_id", "role", "metadata")


def _kind(metadata: Any) -> str:
    if not isinstance(metadata, dict):
        return "fact"
    words = [metadata.get("memory_type"), metadata.get("category")]
    categories = metadata.get("categories")
    if isinstance(categories, list):
        words += categories
    for word in words:
        if isinstance(word, str) and word.lower() in KINDS:
            return KINDS[word.lower()]
    return "fact"


def _history_records(
    memory_id: str, rows: list[dict[str, Any]], base: dict[str, Any]
) -> tuple[list[SourceRecord], datetime | None, datetime | None]:
    """The texts an UPDATE replaced (each valid until its update), when the current text
    started and when a DELETE ended it."""
    ordered = sorted(
        (row for row in rows if isinstance(row, dict)),
        key=lambda row: when(row.get("updated_at")) or when(row.get("created_at")) or _EARLY,
    )
    earlier: list[SourceRecord] = []
    started: datetime | None = None
    ended: datetime | None = None
    previous_start: datetime | None = None
    for row in ordered:
        event = str(row.get("event", "")).upper()
        at = when(row.get("updated_at")) or when(row.get("created_at"))
        if event == "ADD":
            started = previous_start = when(row.get("created_at")) or at
        elif event == "UPDATE":
            old = text(row.get("old_memory"))
            if old and old.strip():
                earlier.append(
                    SourceRecord(
                        system=SYSTEM,
                        source_id=f"{memory_id}#{identifier(row.get('id')) or len(earlier)}",
                        content=old,
                        kind=base["kind"],
                        created_at=previous_start,
                        updated_at=at,
                        valid_from=previous_start,
                        valid_until=at,
                        attributes={"memory_id": memory_id, "replaced_by_event": row.get("id")}
                        | base["claims"],
                    )
                )
            started = previous_start = at
        elif event == "DELETE" or row.get("is_deleted"):
            ended = at
    return earlier, started, ended


def _record(item: Any) -> Iterator[SourceRecord | SkippedRecord]:
    if not isinstance(item, dict) or "memory" not in item or "id" not in item:
        raise not_the_system(SYSTEM, "a memory is an object with an id and a memory")
    memory_id = identifier(item.get("id"))
    if memory_id is None:
        raise not_the_system(SYSTEM, "a memory's id is a string")
    content = text(item.get("memory"))
    if content is None or not content.strip():
        yield SkippedRecord(SYSTEM, memory_id, "The memory has no text.")
        return
    claims = {name: item[name] for name in _CLAIMED if item.get(name) not in (None, "", {})}
    kind = _kind(item.get("metadata"))
    created, updated = when(item.get("created_at")), when(item.get("updated_at"))
    history = item.get("history")
    started = ended = None
    relations: tuple[SourceRelation, ...] = ()
    if isinstance(history, list) and history:
        earlier, started, ended = _history_records(
            memory_id, history, {"kind": kind, "claims": claims}
        )
        yield from earlier
        claims = claims | {"history": history[:MAX_HISTORY]}
        relations = tuple(SourceRelation("updates", e.source_id) for e in earlier)
    yield SourceRecord(
        system=SYSTEM,
        source_id=memory_id,
        content=content,
        kind=kind,
        created_at=created,
        updated_at=updated,
        valid_from=started or created,
        valid_until=ended,
        relations=relations,
        attributes=claims,
    )


def read(source: IO[bytes]) -> Iterator[SourceRecord | SkippedRecord]:
    start = first_byte(source)
    if start not in (b"{", b"["):
        raise not_the_system(SYSTEM, "it is not a JSON object or list")
    place = "results.item" if start == b"{" else "item"
    keys: set[str] = set()
    found = False
    for _place, item in json_items(source, system=SYSTEM, places={place}, keys=keys):
        found = True
        yield from _record(item)
    if start == b"{" and not found and "results" not in keys:
        raise not_the_system(SYSTEM, 'it has no "results"')
