"""supermemory: its documents with their memories, as its API lists them.

The shape is supermemory's own (supermemoryai/supermemory: the `DocumentsWithMemoriesResponse`
of `POST /v3/documents/documents`, typed in its apps' and packages' `types.ts`):
`{"documents": [{"id", "customId", "title", "summary", "containerTags", "createdAt",
"updatedAt", "memoryEntries": [memory, ...]}], "pagination": {...}}`, each memory
`{"id", "memory", "createdAt", "updatedAt", "isLatest", "isForgotten", "forgetAfter",
"forgetReason", "version", "parentMemoryId", "rootMemoryId", "isStatic", "memoryRelations":
{"<memory id>": "updates" | "extends" | "derives"}}`. Older answers name the list `memories`
and the text `content`; a top-level `{"memories": [...]}` (memories without documents) is read
too. A memory that is forgotten, or not the latest of its versions, is valid until its last
update; relations between memories become typed links (docs/import.md has the table); the
document (id, title, custom id, container tags) is kept as claims. The documents list
(`POST /v3/documents/list`, its docs' example in tests/data/supermemory/) names its documents
`memories` too, without memory text: such a document (an item with a document's `status`,
`title`, `type`, `url` or `customId` and no text) is skipped, not taken for a broken file.
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
from memories.portability.sources.records import SkippedRecord, SourceRecord, SourceRelation

SYSTEM = "supermemory"
_DOCUMENT_CLAIMS = ("id", "customId", "title", "containerTags", "type", "url", "metadata")
_DOCUMENT_MARKS = {"status", "title", "type", "url", "customId", "summary"}
_MEMORY_CLAIMS = (
    "version",
    "parentMemoryId",
    "rootMemoryId",
    "isStatic",
    "spaceId",
    "forgetReason",
    "forgetAfter",
    "spaceContainerTag",
    "metadata",
)


def _memory(item: Any, document: dict[str, Any]) -> SourceRecord | SkippedRecord:
    if (
        not document
        and isinstance(item, dict)
        and not ({"memory", "content"} & set(item))
        and _DOCUMENT_MARKS & set(item)
        and (document_id := identifier(item.get("id"))) is not None
    ):
        # A document of the documents list: its memories are not in this answer.
        return SkippedRecord(
            SYSTEM, document_id, "The documents list holds no memory text for this document."
        )
    if not isinstance(item, dict) or "id" not in item or not ({"memory", "content"} & set(item)):
        raise not_the_system(SYSTEM, "a memory is an object with an id and a memory")
    memory_id = identifier(item.get("id"))
    if memory_id is None:
        raise not_the_system(SYSTEM, "a memory's id is a string")
    content = text(item.get("memory")) or text(item.get("content"))
    if content is None or not content.strip():
        return SkippedRecord(SYSTEM, memory_id, "The memory has no text.")
    created, updated = when(item.get("createdAt")), when(item.get("updatedAt"))
    ended = None
    if item.get("isForgotten") or item.get("isLatest") is False:
        ended = updated or created
    relations = []
    related = item.get("memoryRelations")
    if isinstance(related, dict):
        relations += [
            SourceRelation(type=str(kind), target=str(target))
            for target, kind in related.items()
            if isinstance(kind, str)
        ]
    elif isinstance(related, list):
        relations += [
            SourceRelation(type=str(r.get("relationType")), target=str(r.get("targetMemoryId")))
            for r in related
            if isinstance(r, dict) and r.get("targetMemoryId")
        ]
    if (updates := identifier(item.get("updatesMemoryId"))) is not None:
        relations.append(SourceRelation(type="updates", target=updates))
    attributes = {n: item[n] for n in _MEMORY_CLAIMS if item.get(n) not in (None, "", {})}
    if document:
        attributes["document"] = document
    return SourceRecord(
        system=SYSTEM,
        source_id=memory_id,
        content=content,
        kind="preference" if item.get("isStatic") else "fact",
        created_at=created,
        updated_at=updated,
        valid_from=created,
        valid_until=ended,
        relations=tuple(relations),
        attributes=attributes,
    )


def _document(item: Any) -> Iterator[SourceRecord | SkippedRecord]:
    if not isinstance(item, dict) or "id" not in item:
        raise not_the_system(SYSTEM, "a document is an object with an id")
    entries = item.get("memoryEntries", item.get("memories"))
    if entries is None or not isinstance(entries, list):
        raise not_the_system(SYSTEM, "a document lists its memoryEntries")
    document = {n: item[n] for n in _DOCUMENT_CLAIMS if item.get(n) not in (None, "", {})}
    if not entries:
        yield SkippedRecord(
            SYSTEM, identifier(item.get("id")) or "", "The document has no memories."
        )
    for entry in entries:
        yield _memory(entry, document)


def read(source: IO[bytes]) -> Iterator[SourceRecord | SkippedRecord]:
    if first_byte(source) != b"{":
        raise not_the_system(SYSTEM, 'it is not a JSON object with "documents"')
    keys: set[str] = set()
    places = {"documents.item", "memories.item"}
    for place, item in json_items(source, system=SYSTEM, places=places, keys=keys):
        if place == "documents.item":
            yield from _document(item)
        else:
            yield _memory(item, {})
    if not keys & {"documents", "memories"}:
        raise not_the_system(SYSTEM, 'it has no "documents"')
