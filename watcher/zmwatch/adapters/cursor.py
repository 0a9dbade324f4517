"""Cursor: ~/.cursor/projects/<workspace>/agent-transcripts/**/*.jsonl, entries
`{role, message: {content: [blocks]}}`.

Only `text` blocks of user and assistant entries are kept (tool calls, tool results and
thinking are skipped); the `<user_query>` wrapper around a user's words is taken off. The
transcript does not name its working directory: the workspace folder's name is the workspace
path with every character other than a letter or digit turned into `-`, and is resolved by
looking for the folders that spell it (an ambiguous or missing one is not resolved).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from zmwatch.adapters.common import Context, folder_name, turn

NAME = "cursor"
_QUERY = re.compile(r"</?user_query>")


def root(home: Path) -> Path:
    return home / ".cursor" / "projects"


def owns(path: Path, home: Path) -> bool:
    return (
        path.suffix == ".jsonl" and "agent-transcripts" in path.parts and root(home) in path.parents
    )


def transcripts(home: Path) -> list[Path]:
    return sorted(root(home).glob("*/agent-transcripts/**/*.jsonl"))


def workspace_of(name: str, base: Path = Path("/")) -> Path | None:
    """The one directory whose path spells the workspace folder's name (None if none, or more
    than one)."""
    found = []

    def walk(directory: Path, rest: str) -> None:
        try:
            entries = [entry for entry in os.scandir(directory) if entry.is_dir()]
        except OSError:
            return
        for entry in entries:
            spelled = folder_name(entry.name)
            if rest == spelled:
                found.append(Path(entry.path))
            elif spelled and rest.startswith(spelled + "-"):
                walk(Path(entry.path), rest[len(spelled) + 1 :])
            if len(found) > 1:
                return

    walk(base, name.strip("-"))
    return found[0] if len(found) == 1 else None


def context(path: Path) -> Context | None:
    parts = path.parts
    index = parts.index("agent-transcripts")
    workspace = workspace_of(parts[index - 1])
    return Context(cwd=str(workspace), conversation_id=path.stem) if workspace else None


def turns(entry: dict[str, Any]) -> list[str]:
    role = entry.get("role")
    message = entry.get("message")
    if role not in ("user", "assistant") or not isinstance(message, dict):
        return []
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    found = []
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                found += turn(role, _QUERY.sub("", text))
    return found
