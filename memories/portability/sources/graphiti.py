"""Graphiti / Zep: a graph as graphiti-core's own models dump it.

graphiti-core has no export command; its file here is what its pydantic models write with
`model_dump(mode="json")`, gathered in one JSON object:

    {"episodes": [EpisodicNode, ...], "nodes": [EntityNode, ...], "edges": [EntityEdge, ...]}

(any of the three may be missing; the fields are graphiti_core/nodes.py's and edges.py's). The
file is streamed with ijson twice: the first pass checks it whole (JSON, UTF-8, nested at most
`MAX_DEPTH` deep, each item the shape graphiti-core writes) and keeps a small index (each
entity node's uuid, name and kind; each episode's uuid), the second yields the records, so a
file of a million edges is read in bounded memory and a bad one is refused before anything is
written. The input must be seekable (a path, or an uploaded file).

The mapping (docs/import.md shows it):

- each entity edge is one memory of kind fact: its `fact` as content, valid from `valid_at`
  until `invalid_at` (or `expired_at`, when Graphiti retired it without saying when it stopped
  being true), its two nodes as entities (source first, kinds from their labels by
  `ENTITY_KIND_BY_LABEL`), a relation named by the edge's `name` from the source entity to the
  target entity, a relation `extracted_from` to each of its episodes in the file, and its uuids,
  group_id and episodes in the attributes;
- each episode is one memory of kind episode (the text the facts were drawn from): its
  `content`, `created_at`, and its `name`, `source`, `source_description`, `valid_at`
  (the time the episode speaks of) and `group_id` in the attributes;
- an entity node with a summary is one memory of kind fact about that entity; a node without one
  is skipped (its name arrives with the facts that name it).

Source ids are `edge:<uuid>`, `episode:<uuid>` and `node:<uuid>`: a second import writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import ijson
from django.utils.translation import gettext as _

from memories.portability.sources.jsonfile import in_utc
from memories.portability.sources.records import (
    BadSource,
    SkippedRecord,
    SourceEntity,
    SourceRecord,
    SourceRelation,
)

SYSTEM = "graphiti"
SECTIONS = ("episodes", "nodes", "edges")
# graphiti-core's items are flat but for `attributes` and `episode_metadata`, which the LLM
# fills: a few levels. Deeper than this is not a file graphiti-core wrote.
MAX_DEPTH = 32
FIELD = "body"  # the REST body (or the file the command names), as the other readers say

# An entity node's label (graphiti-core's own "Entity" aside) → our entity kind.
ENTITY_KIND_BY_LABEL = {
    "person": "person",
    "user": "person",
    "team": "team",
    "organization": "organisation",
    "organisation": "organisation",
    "company": "organisation",
    "location": "place",
    "place": "place",
    "city": "place",
    "country": "place",
    "event": "event",
    "product": "product",
    "tool": "tool",
    "software": "tool",
    "library": "tool",
    "service": "service",
    "project": "repository",
    "repository": "repository",
}


def _refused(message: str) -> BadSource:
    return BadSource(FIELD, message)


def entity_kind(labels: list[Any]) -> str:
    for label in labels:
        kind = ENTITY_KIND_BY_LABEL.get(str(label).lower())
        if kind:
            return kind
    return ""


def _when(item: dict[str, Any], key: str, where: str) -> datetime | None:
    value = item.get(key)
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise _refused(_("%(w)s: %(k)s is not an ISO 8601 time.") % {"w": where, "k": key})
    return in_utc(moment)  # None out of UTC's range: read as absent


def _text(item: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise _refused(_("%(w)s has no %(k)s text.") % {"w": where, "k": key})
    return value


def _strings(item: dict[str, Any], key: str, where: str) -> list[str]:
    value = item.get(key) or []
    if not isinstance(value, list) or not all(isinstance(entry, str) for entry in value):
        raise _refused(_("%(w)s: %(k)s is not a list of texts.") % {"w": where, "k": key})
    return value


def _items(upload: IO[bytes]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(section, position, item) for every item of the three sections, in file order; the
    whole stream checked on the way (a top-level object, arrays of objects, the depth)."""
    upload.seek(0)
    builder: ijson.ObjectBuilder | None = None
    section = ""
    position = -1
    depth = 0
    seen_section = False
    first = True
    try:
        for prefix, event, value in ijson.parse(upload, use_float=True):
            if first and event != "start_map":
                raise _refused(_("The file is not a Graphiti export: not a JSON object."))
            first = False
            if event in ("start_map", "start_array"):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _refused(_("The file is nested too deep."))
            elif event in ("end_map", "end_array"):
                depth -= 1
            if builder is not None:
                builder.event(event, value)
                if depth == 2:  # the item's own end
                    item = builder.value
                    builder = None
                    yield section, position, item
                continue
            if prefix in SECTIONS:  # a section's own value: a list, or the file is wrong
                if event == "start_array":
                    section, position, seen_section = prefix, -1, True
                elif event != "end_array":
                    raise _refused(_("%(s)s is not a list.") % {"s": prefix})
            elif section and prefix == f"{section}.item":
                position += 1
                if event != "start_map":
                    raise _refused(
                        _("%(s)s[%(i)d] is not an object.") % {"s": section, "i": position}
                    )
                builder = ijson.ObjectBuilder()
                builder.event(event, value)
    except ijson.JSONError as exc:
        if "UTF8" in str(exc):  # yajl's words for bytes that are not UTF-8
            raise _refused(_("The file is not UTF-8.")) from None
        # yajl quotes the bytes around the error; the first line says what it is.
        reason = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise _refused(_("The file is not JSON: %(e)s") % {"e": reason}) from None
    except UnicodeDecodeError as exc:
        raise _refused(_("The file is not UTF-8 (byte %(at)d).") % {"at": exc.start}) from None
    if not seen_section:
        raise _refused(
            _("The file is not a Graphiti export: it has none of episodes, nodes, edges.")
        )


class _Index:
    """What the second pass needs of the whole file: the nodes' names and kinds, the
    episodes' ids. Checks every item's shape as it goes."""

    def __init__(self) -> None:
        self.nodes: dict[str, tuple[str, str]] = {}
        self.episodes: set[str] = set()

    def add(self, section: str, position: int, item: dict[str, Any]) -> None:
        where = f"{section}[{position}]"
        uuid = _text(item, "uuid", where)
        if section == "nodes":
            name = _text(item, "name", where)
            _text(item, "summary", where, required=False)
            _when(item, "created_at", where)
            self.nodes[uuid] = (name, entity_kind(_strings(item, "labels", where)))
        elif section == "episodes":
            _text(item, "content", where)
            _text(item, "name", where, required=False)
            for key in ("created_at", "valid_at"):
                _when(item, key, where)
            self.episodes.add(uuid)
        else:
            for key in ("source_node_uuid", "target_node_uuid", "fact"):
                _text(item, key, where)
            _text(item, "name", where, required=False)
            _strings(item, "episodes", where)
            for key in ("created_at", "valid_at", "invalid_at", "expired_at", "reference_time"):
                _when(item, key, where)


def _plain(value: Any) -> Any:
    """An item's own attributes, embeddings left out (they are the source's vectors)."""
    if isinstance(value, dict):
        return {key: item for key, item in value.items() if not key.endswith("_embedding")}
    return value


def _edge(item: dict[str, Any], index: _Index, where: str) -> SourceRecord | SkippedRecord:
    uuid = item["uuid"]
    fact = item["fact"].strip()
    if not fact:
        return SkippedRecord(system=SYSTEM, source_id=f"edge:{uuid}", reason=_("No fact."))
    entities: list[SourceEntity] = []
    names: list[str] = []
    for key in ("source_node_uuid", "target_node_uuid"):
        node = index.nodes.get(item[key])
        if node is not None:
            names.append(node[0])
            if all(entity.name != node[0] for entity in entities):
                entities.append(SourceEntity(name=node[0], kind=node[1]))
    relations: list[SourceRelation] = []
    target = index.nodes.get(item["target_node_uuid"])
    if item.get("name") and target is not None and item["source_node_uuid"] in index.nodes:
        relations.append(SourceRelation(item["name"], target[0], target_is_record=False))
    episodes = item.get("episodes") or []
    relations.extend(
        SourceRelation("extracted_from", f"episode:{episode}")
        for episode in episodes
        if episode in index.episodes
    )
    invalid_at = _when(item, "invalid_at", where)
    expired_at = _when(item, "expired_at", where)
    return SourceRecord(
        system=SYSTEM,
        source_id=f"edge:{uuid}",
        content=fact,
        kind="fact",
        created_at=_when(item, "created_at", where),
        valid_from=_when(item, "valid_at", where),
        valid_until=invalid_at or expired_at,
        entities=tuple(entities),
        relations=tuple(relations),
        attributes={
            "uuid": uuid,
            "group_id": item.get("group_id"),
            "name": item.get("name"),
            "source_node_uuid": item["source_node_uuid"],
            "target_node_uuid": item["target_node_uuid"],
            "episodes": episodes,
            "invalid_at": item.get("invalid_at"),
            "expired_at": item.get("expired_at"),
            "reference_time": item.get("reference_time"),
            "attributes": _plain(item.get("attributes") or {}),
        },
    )


def _episode(item: dict[str, Any], where: str) -> SourceRecord | SkippedRecord:
    uuid = item["uuid"]
    content = item["content"].strip()
    if not content:
        return SkippedRecord(
            system=SYSTEM, source_id=f"episode:{uuid}", reason=_("The episode is empty.")
        )
    return SourceRecord(
        system=SYSTEM,
        source_id=f"episode:{uuid}",
        content=content,
        kind="episode",
        created_at=_when(item, "created_at", where),
        attributes={
            "uuid": uuid,
            "group_id": item.get("group_id"),
            "name": item.get("name"),
            "source": item.get("source"),
            "source_description": item.get("source_description"),
            "valid_at": item.get("valid_at"),
            "entity_edges": item.get("entity_edges") or [],
            "episode_metadata": item.get("episode_metadata"),
        },
    )


def _node(item: dict[str, Any], index: _Index, where: str) -> SourceRecord | SkippedRecord:
    uuid = item["uuid"]
    summary = (item.get("summary") or "").strip()
    if not summary:
        return SkippedRecord(
            system=SYSTEM,
            source_id=f"node:{uuid}",
            reason=_("An entity node without a summary: its name comes with its facts."),
        )
    name, kind = index.nodes[uuid]
    return SourceRecord(
        system=SYSTEM,
        source_id=f"node:{uuid}",
        content=summary,
        kind="fact",
        created_at=_when(item, "created_at", where),
        entities=(SourceEntity(name=name, kind=kind),),
        attributes={
            "uuid": uuid,
            "group_id": item.get("group_id"),
            "name": name,
            "labels": item.get("labels") or [],
            "attributes": _plain(item.get("attributes") or {}),
        },
    )


def read(source: Path | str | IO[bytes]) -> Iterator[SourceRecord | SkippedRecord]:
    """The records of a Graphiti export (a path or a seekable binary file), the file checked
    whole before the first record."""
    if isinstance(source, str | Path):
        try:
            upload: IO[bytes] = Path(source).open("rb")  # noqa: SIM115 - closed by _records
        except OSError as exc:
            raise _refused(
                _("%(p)s cannot be read: %(e)s") % {"p": source, "e": exc.strerror}
            ) from None
    else:
        upload = source
    index = _Index()
    for section, position, item in _items(upload):
        index.add(section, position, item)
    return _records(upload, index, close=upload.close if upload is not source else None)


def _records(
    upload: IO[bytes], index: _Index, *, close: Callable[[], None] | None
) -> Iterator[SourceRecord | SkippedRecord]:
    try:
        for section, position, item in _items(upload):
            where = f"{section}[{position}]"
            if section == "edges":
                yield _edge(item, index, where)
            elif section == "episodes":
                yield _episode(item, where)
            else:
                yield _node(item, index, where)
    finally:
        if close is not None:
            close()
