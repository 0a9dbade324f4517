"""The export format, version 1: what each file of an archive holds and how it is written.

An archive is a zip. Its entries, in this order: every memory file in sorted path order
(`archive/…` for forgotten and superseded memories, then `conflicts.json`, then `entities.json`
when the scopes have entities, then `memories/…`),
and `manifest.json` last, which names the format version and the sha256 of every other entry.
A memory file is YAML front matter between `---` lines (one `key: value` line per field,
the value in YAML's flow style, which JSON is) and the canonical content as the body.

Everything here is a pure function of the rows, so the same data always gives the same bytes:
keys in a fixed order, times in UTC ISO 8601, YAML written the same way each time. A field added
later goes at the end of its mapping and is optional on import, which is how version 1 grows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import yaml

SERVER_VERSION = "0.1.0"  # the project's (pyproject.toml), named in every manifest
FORMAT_NAME = "zero-memory-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CONFLICTS = "conflicts.json"
# The exported scopes' entities with their aliases, when they have any (after conflicts.json).
ENTITIES = "entities.json"
LIVE_DIR = "memories"
ARCHIVE_DIR = "archive"

# Fields whose values belong to the server that wrote the archive: its ids (an import assigns
# new ones), the scope the memories live in, and its accounts (people who forgot, edited or
# resolved are named, but an import records none of them as a user of its own).
# A comparison of two archives of the same memories ignores exactly these.
SERVER_ASSIGNED = [
    "manifest.server_version",
    "manifest.scopes[].id",
    "memory.id",
    "memory.scope",
    "memory.forgotten.by",
    "memory.versions[].edited_by",
    "memory.validity[].started_by",
    "memory.validity[].ended_by",
    "memory.links[].author",
    "memory.links[].removed_by",
    "conflict.id",
    "conflict.scope",
    "conflict.resolved_by",
    "conflict.challenged_by",
    "conflict.actions[].by",
    "conflict.actions[].undone_by",
    "entity.scope",
]


def when(value: datetime | None) -> str | None:
    """A time as the archive writes it: UTC, ISO 8601, microseconds."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


# libyaml's safe loader when PyYAML has it (it does in its wheels): fast, no Python tags.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The front matter the format writes is flat JSON values: a few levels of nesting at most.
MAX_DEPTH = 8
# What YAML reads as a line break or a byte-order mark but JSON leaves as it is.
_YAML_BREAKS = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")


# The encoder `json.dumps` would build on every call with these options, built once.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode
_encode_string = json.encoder.encode_basestring  # what that encoder does with a str


def _flow(value: Any) -> str:
    """A value as JSON, the encoder skipped for the scalars most fields hold."""
    if type(value) is str:
        return _encode_string(value)
    if value is None:
        return "null"
    return _encode(value)


def _escape_break(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def dump_front_matter(fields: dict[str, Any]) -> str:
    """The front matter: one `key: value` line per field, each value in YAML's flow style.
    JSON is YAML: strings double-quoted with escapes (so no value spans lines), on one line;
    the few characters YAML alone reads as breaks are escaped as well (keys have none of
    them, so the whole text is searched once). PyYAML's own emitter was 1 ms a memory."""
    text = "".join([f"{key}: {_flow(value)}\n" for key, value in fields.items()])
    return _YAML_BREAKS.sub(_escape_break, text)


def memory_file(fields: dict[str, Any], content: str) -> bytes:
    """One memory: the front matter, then the canonical content exactly as stored."""
    return f"---\n{dump_front_matter(fields)}---\n{content}".encode()


def plain_yaml(text: str) -> Any:
    """`text` loaded as plain YAML: no anchor, alias or tag, nested at most `MAX_DEPTH` deep.
    The events are read first, so an alias never expands (a few KB of aliases would otherwise
    become gigabytes after the archive's sizes were counted) and no tag reaches a constructor."""
    depth = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ValueError("the front matter uses a YAML anchor or alias")
        if getattr(event, "tag", None) is not None:
            raise ValueError("the front matter uses a YAML tag")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError("the front matter is nested too deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - the safe loader, checked above


def split_memory_file(data: bytes) -> tuple[dict[str, Any], str]:
    """The front matter and the body of a memory file; ValueError when it is not one (bytes
    that are not UTF-8, YAML that does not parse or uses anchors, aliases or tags)."""
    text = data.decode("utf-8")
    if not text.startswith("---\n"):
        raise ValueError("a memory file starts with a --- line")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise ValueError("the front matter has no closing --- line")
    try:
        fields = plain_yaml(text[4 : end + 1])
    except yaml.YAMLError as exc:
        raise ValueError(f"the front matter is not valid YAML: {exc}") from None
    if not isinstance(fields, dict):
        raise ValueError("the front matter is not a mapping")
    return fields, text[end + 5 :]


def json_file(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False) + "\n").encode()


def manifest_line(path: str, digest: str, *, first: bool) -> bytes:
    """One `path: sha256` pair of the manifest's `files`, as `json_file` writes it."""
    return (b"\n  " if first else b",\n  ") + f"{_encode(path)}: {_encode(digest)}".encode()


def manifest_parts(manifest: dict[str, Any], lines: Iterable[bytes]) -> Iterator[bytes]:
    """`json_file` of the manifest with `files` last, its pairs (`manifest_line`, in path
    order) streamed in, so the list of every file is never held whole."""
    head = json_file({**manifest, "files": {}})  # ends with `"files": {}` and `}` on two lines
    yield head[: -len(b"}\n}\n")]
    empty = True
    for line in lines:
        empty = empty and not line
        yield line
    yield b"}\n}\n" if empty else b"\n }\n}\n"
