"""The export format, version 1: what each file of an archive holds and how it is written.

An archive is a zip. Its entries, in this order: every memory file in sorted path order
(`archive/…` for forgotten and superseded memories, then `conflicts.json`, then `memories/…`),
and `manifest.json` last, which names the format version and the sha256 of every other entry.
A memory file is YAML front matter between `---` lines and the canonical content as the body.

Everything here is a pure function of the rows, so the same data always gives the same bytes:
keys in a fixed order, times in UTC ISO 8601, YAML written the same way each time. A field added
later goes at the end of its mapping and is optional on import, which is how version 1 grows.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import yaml

FORMAT_NAME = "zero-memory-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
CONFLICTS = "conflicts.json"
LIVE_DIR = "memories"
ARCHIVE_DIR = "archive"

# Fields whose values belong to the server that wrote the archive: its ids (kept on import when
# still free, else new), the scope the memories live in, and its accounts (people who forgot,
# edited or resolved are named, but an import records none of them as the importing user).
# A comparison of two archives of the same memories ignores exactly these.
SERVER_ASSIGNED = [
    "manifest.server_version",
    "manifest.scopes[].id",
    "memory.id",
    "memory.scope",
    "memory.forgotten.by",
    "memory.versions[].edited_by",
    "conflict.id",
    "conflict.scope",
    "conflict.resolved_by",
    "conflict.challenged_by",
    "conflict.actions[].by",
    "conflict.actions[].undone_by",
]


def when(value: datetime | None) -> str | None:
    """A time as the archive writes it: UTC, ISO 8601, microseconds."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def parse_when(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


# libyaml's safe dumper and loader when PyYAML has them (it does in its wheels): fast, no tags.
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Writer(_Dumper):
    """Text with a line break as one double-quoted line (escapes, never folded), so no line of a
    value can look like the closing `---`; everything else as PyYAML writes it."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = '"' if "\n" in value or "\r" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Writer.add_representer(str, _text)


def dump_front_matter(fields: dict[str, Any]) -> str:
    return yaml.dump(
        fields,
        Dumper=_Writer,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1 << 30,
    )


def memory_file(fields: dict[str, Any], content: str) -> bytes:
    """One memory: the front matter, then the canonical content exactly as stored."""
    return f"---\n{dump_front_matter(fields)}---\n{content}".encode()


def split_memory_file(data: bytes) -> tuple[dict[str, Any], str]:
    """The front matter and the body of a memory file; ValueError when it is not one."""
    text = data.decode("utf-8")
    if not text.startswith("---\n"):
        raise ValueError("a memory file starts with a --- line")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise ValueError("the front matter has no closing --- line")
    fields = yaml.load(text[4 : end + 1], Loader=_Loader)  # noqa: S506 - the safe loader
    if not isinstance(fields, dict):
        raise ValueError("the front matter is not a mapping")
    return fields, text[end + 5 :]


def json_file(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False) + "\n").encode()
