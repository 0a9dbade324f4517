"""The export format, version 1: what each file of an archive holds and how it is written.

An archive is a zip. Its entries, in this order: every memory file in sorted path order
(`archive/…` for forgotten and superseded memories, then `conflicts.json`, then `memories/…`),
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
from datetime import UTC, datetime
from typing import Any

import yaml

SERVER_VERSION = "0.1.0"  # the project's (pyproject.toml), named in every manifest
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
    "memory.validity[].started_by",
    "memory.validity[].ended_by",
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


# libyaml's safe loader when PyYAML has it (it does in its wheels): fast, no tags.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# What YAML reads as a line break or a byte-order mark but JSON leaves as it is.
_YAML_BREAKS = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")


def _flow(value: Any) -> str:
    """A value as a YAML flow scalar or collection. JSON is YAML: strings double-quoted with
    escapes (so no value spans lines), on one line; the few characters YAML alone reads as
    breaks are escaped as well. PyYAML's own emitter was 1 ms a memory, most of an export."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return _YAML_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dump_front_matter(fields: dict[str, Any]) -> str:
    """The front matter: one `key: value` line per field, each value in flow style."""
    return "".join(f"{key}: {_flow(value)}\n" for key, value in fields.items())


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
