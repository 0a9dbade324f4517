"""Letta: an agent file (`.af`) or a list of archival-memory passages.

The agent file is Letta's `AgentFileSchema` (`letta/schemas/agent_file.py` in letta-ai/letta;
examples in letta-ai/agent-file): `{"agents": [...], "blocks": [...], "groups", "files",
"sources", "tools", "mcp_servers", "metadata", "created_at"}`. Its memory is the core-memory
blocks (`{"id", "label", "value", "description", "metadata", ...}`): each block with a value is
a memory, its label telling the kind (`KINDS`). The older single-agent file
(`letta/serialize_schemas/pydantic_agent_schema.py`) holds its blocks in `core_memory`, and is
read the same way. Messages, tools and settings are not memories and are not read. Archival
memory is what `client.agents.passages.list(agent_id)` answers, a list of Letta `Passage`s
(`{"id", "text", "tags", "created_at", "updated_at", "agent_id", "archive_id", "metadata",
...}`), as such a list or under `"passages"`/`"archival_memory"` in an agent file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from memories.portability.sources.jsonfile import (
    first_byte,
    identifier,
    json_items,
    not_the_system,
    text,
    when,
)
from memories.portability.sources.records import SkippedRecord, SourceRecord

SYSTEM = "letta"

# A core-memory block's label → our kind (any other label is a fact).
KINDS = {
    "human": "preference",
    "persona": "convention",
    "preferences": "preference",
    "project": "reference",
    "decisions": "decision",
    "tasks": "task",
}
_BLOCKS = {"blocks.item", "agents.item.core_memory.item", "core_memory.item"}
_PASSAGES = {
    "passages.item",
    "archival_memory.item",
    "agents.item.passages.item",
    "agents.item.archival_memory.item",
}
_AGENT_FILE_KEYS = {"agents", "blocks", "core_memory", "passages", "archival_memory"}
_BLOCK_CLAIMS = ("label", "description", "limit", "read_only", "metadata", "template_name")
_PASSAGE_CLAIMS = ("agent_id", "archive_id", "source_id", "file_id", "file_name", "metadata")


def _block(item: Any) -> SourceRecord | SkippedRecord:
    if not isinstance(item, dict) or "value" not in item:
        raise not_the_system(SYSTEM, "a memory block is an object with a value")
    block_id = identifier(item.get("id")) or identifier(item.get("label"))
    if block_id is None:
        raise not_the_system(SYSTEM, "a memory block has an id or a label")
    value = text(item.get("value"))
    if value is None or not value.strip():
        return SkippedRecord(SYSTEM, block_id, "The memory block is empty.")
    label = text(item.get("label")) or ""
    return SourceRecord(
        system=SYSTEM,
        source_id=f"block:{block_id}",
        content=value,
        kind=KINDS.get(label.lower(), "fact"),
        created_at=when(item.get("created_at")),
        updated_at=when(item.get("updated_at")),
        attributes={n: item[n] for n in _BLOCK_CLAIMS if item.get(n) not in (None, "", {})},
    )


def _passage(item: Any) -> SourceRecord | SkippedRecord:
    if not isinstance(item, dict) or "text" not in item or "id" not in item:
        raise not_the_system(SYSTEM, "a passage is an object with an id and a text")
    passage_id = identifier(item.get("id"))
    if passage_id is None:
        raise not_the_system(SYSTEM, "a passage's id is a string")
    content = text(item.get("text"))
    if content is None or not content.strip():
        return SkippedRecord(SYSTEM, passage_id, "The passage has no text.")
    if item.get("is_deleted"):
        return SkippedRecord(SYSTEM, passage_id, "The passage was deleted in Letta.")
    tags = tuple(tag for tag in item.get("tags") or () if isinstance(tag, str))
    created = when(item.get("created_at"))
    return SourceRecord(
        system=SYSTEM,
        source_id=f"passage:{passage_id}",
        content=content,
        kind="fact",
        created_at=created,
        updated_at=when(item.get("updated_at")),
        valid_from=created,
        tags=tags,
        attributes={n: item[n] for n in _PASSAGE_CLAIMS if item.get(n) not in (None, "", {})}
        | ({"tags": list(tags)} if tags else {}),
    )


def read(source: IO[bytes]) -> Iterator[SourceRecord | SkippedRecord]:
    start = first_byte(source)
    if start == b"[":
        for _place, item in json_items(source, system=SYSTEM, places={"item"}):
            yield _passage(item)
        return
    if start != b"{":
        raise not_the_system(SYSTEM, "it is not a JSON object or list")
    keys: set[str] = set()
    for place, item in json_items(source, system=SYSTEM, places=_BLOCKS | _PASSAGES, keys=keys):
        yield _block(item) if place in _BLOCKS else _passage(item)
    if not keys & _AGENT_FILE_KEYS:
        raise not_the_system(SYSTEM, 'an agent file has "agents" and "blocks"')
