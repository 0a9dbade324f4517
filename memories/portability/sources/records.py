"""What a reader of another system's file yields, whatever the system.

A reader (one module per system beside this one) is a function
`read(source: SourceInput) -> Iterator[SourceRecord | SkippedRecord]` that streams: it never
holds the whole file's records in memory, so a file of a million rows is read in bounded memory.
A file that is not what the system writes, or is hostile (oversized, nested too deep, invalid
UTF-8, a path out of its folder), raises `BadSource` before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from zeromemory.core.errors import ValidationFailed


class BadSource(ValidationFailed):
    """The file is not one the named system writes, or cannot be read safely: a 400, nothing
    written."""


@dataclass(frozen=True)
class SourceRelation:
    """A relation the source records from this record to another: `target` is the other
    record's `source_id` when the source names records, else the name of an entity."""

    type: str  # the source's own word ("relates_to", "depends on", "implements", ...)
    target: str
    target_is_record: bool = True


@dataclass(frozen=True)
class SourceEntity:
    name: str
    kind: str = ""  # one of memories' entity kinds when the source says, else ""


@dataclass(frozen=True)
class SourceRecord:
    """One memory as another system kept it."""

    system: str  # "mem0", "basic-memory", "graphiti", "letta", "supermemory"
    source_id: str  # its id in that system: stable across exports, the import's ledger key
    content: str
    kind: str = "fact"  # our kind, by the reader's mapping table (docs show it)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    valid_from: datetime | None = None  # validity the source kept (Graphiti's valid_at, ...)
    valid_until: datetime | None = None  # invalid_at / a later history row
    tags: tuple[str, ...] = ()
    entities: tuple[SourceEntity, ...] = ()
    relations: tuple[SourceRelation, ...] = ()
    # Everything else the source said of the record, kept in its provenance as claims: user,
    # agent and run ids, metadata, categories, the file path of a note, history rows.
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SkippedRecord:
    """A record of the file that is not imported, with the reason the dry run reports."""

    system: str
    source_id: str
    reason: str
