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

Two things the real files taught (tests/data/letta/SOURCES.txt): an agent file's ids are the
file's own serial numbers (`block-0`, `agent-0` in every file) and the older file's blocks have
no id at all, so a block is keyed by a digest of its label and value (the file's id kept as
`block_id`), lest the blocks of a second agent read as already imported; and some agent files
are double-encoded (one JSON string holding the file, as letta-ai/agent-file ships several),
which Letta's own import decodes a second time, and so does this reader.
"""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from django.conf import settings
from django.utils.translation import gettext as _

from memories.portability.sources.jsonfile import (
    first_byte,
    identifier,
    json_items,
    not_the_system,
    text,
    when,
)
from memories.portability.sources.records import BadSource, SkippedRecord, SourceRecord

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
_BLOCK_CLAIMS = (
    "label",
    "description",
    "limit",
    "read_only",
    "metadata",
    "metadata_",  # the older file's name for it
    "template_name",
)
_PASSAGE_CLAIMS = ("agent_id", "archive_id", "source_id", "file_id", "file_name", "metadata")


def _block(item: Any) -> SourceRecord | SkippedRecord:
    if not isinstance(item, dict) or "value" not in item:
        raise not_the_system(SYSTEM, "a memory block is an object with a value")
    file_id = identifier(item.get("id"))
    label = text(item.get("label")) or ""
    if file_id is None and not label:
        raise not_the_system(SYSTEM, "a memory block has an id or a label")
    value = text(item.get("value"))
    if value is None or not value.strip():
        return SkippedRecord(SYSTEM, file_id or label, "The memory block is empty.")
    # The file's block id is a serial number of that file (or absent): the same in every agent
    # file, so not a key across files. The label with the value is; digested, so the key (a
    # claim) holds neither's text, which the content guard reads in the label and the value.
    digest = hashlib.sha256(f"{label}\0{value}".encode()).hexdigest()[:24]
    attributes = {n: item[n] for n in _BLOCK_CLAIMS if item.get(n) not in (None, "", {})}
    if file_id is not None:
        attributes["block_id"] = file_id
    return SourceRecord(
        system=SYSTEM,
        source_id=f"block:{digest}",
        content=value,
        kind=KINDS.get(label.lower(), "fact"),
        created_at=when(item.get("created_at")),
        updated_at=when(item.get("updated_at")),
        attributes=attributes,
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


def _decoded_once_more(source: IO[bytes]) -> IO[bytes]:
    """The agent file a double-encoded file holds (a JSON string whose text is the file), as
    Letta's import reads it. The string is read whole, so such a file is refused over
    `ZM_IMPORT_MAX_REQUEST_BYTES`; agent files are small (the largest Letta ships is ~1 MB)."""
    size = source.seek(0, io.SEEK_END)
    source.seek(0)
    if size > settings.IMPORT_MAX_REQUEST_BYTES:
        raise BadSource(
            "body",
            _("A double-encoded agent file over %(n)d bytes is not read.")
            % {"n": settings.IMPORT_MAX_REQUEST_BYTES},
        )
    try:
        inner = json.load(source)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadSource(
            "body", _("The file is not valid JSON in UTF-8: %(e)s") % {"e": exc}
        ) from None
    if not isinstance(inner, str):
        raise not_the_system(SYSTEM, "it is not a JSON object or list")
    try:
        encoded = inner.encode()
    except UnicodeEncodeError as exc:  # a lone surrogate escaped in the string
        raise BadSource(
            "body", _("The file is not valid JSON in UTF-8: %(e)s") % {"e": exc}
        ) from None
    decoded = tempfile.SpooledTemporaryFile(max_size=8 * 1_048_576)  # noqa: SIM115 (returned)
    decoded.write(encoded)
    decoded.seek(0)
    if first_byte(decoded) != b"{":
        raise not_the_system(SYSTEM, "the JSON string it holds is not an agent file")
    return decoded


def read(source: IO[bytes]) -> Iterator[SourceRecord | SkippedRecord]:
    start = first_byte(source)
    if start == b'"':
        source = _decoded_once_more(source)
        start = b"{"
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
