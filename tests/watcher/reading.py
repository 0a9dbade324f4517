"""Reading a transcript with an adapter as the watcher does: its lines in order, through one
reader, each line decoded as the follower decodes it."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from zmwatch.adapters.common import parse_line


def read_entries(adapter: ModuleType, path: Path) -> list[list[str] | None]:
    """What the adapter's reader answers for each complete JSON line (None: not recognised)."""
    reader = adapter.reader(path)
    answers = []
    for raw in path.read_bytes().splitlines(keepends=True):
        if not raw.endswith(b"\n") or not raw.strip(b" \t\r\n\x00"):
            continue  # a torn last line, or padding only: the follower waits or skips too
        try:
            entry = parse_line(raw)
        except ValueError:
            continue
        answers.append(reader.turns(entry) if isinstance(entry, dict) else None)
    return answers


def read_turns(adapter: ModuleType, path: Path) -> list[str]:
    """Every turn the adapter keeps from a transcript, in order."""
    return [text for answer in read_entries(adapter, path) for text in answer or []]
