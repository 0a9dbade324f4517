"""What the adapters share: a transcript's context, a rendered turn, the head of a file."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEAD_LINES = 200  # how far into a transcript its working directory is looked for


def folder_name(path: str) -> str:
    """How Claude Code and Cursor name a project's folder: its path with every character other
    than a letter or digit as `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


@dataclass(frozen=True)
class Context:
    cwd: str
    conversation_id: str


def turn(role: str, text: str) -> list[str]:
    """A turn as the chunk shows it ("user: …"), or nothing for blank text."""
    text = text.strip()
    return [f"{role}: {text}"] if text else []


def head_entries(path: Path) -> Iterator[dict[str, Any]]:
    """The first complete JSONL entries of a transcript that are JSON objects."""
    try:
        with path.open("rb") as lines:
            for number, line in enumerate(lines):
                if number >= HEAD_LINES or not line.endswith(b"\n"):
                    return
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    yield entry
    except OSError:
        return
