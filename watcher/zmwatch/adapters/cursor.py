"""Cursor: ~/.cursor/projects/<workspace>/agent-transcripts/**/*.jsonl, entries
`{role, message: {content: [blocks]}}`.

Only `text` blocks of user and assistant entries are kept (tool calls, tool results and
thinking are skipped). Of a user's text only what the `<user_query>` wrapper holds is kept
(the `<timestamp>` before it and any other context Cursor adds are left out); Cursor's
`[REDACTED]` markers (whole turns, or after a turn) are taken off. A subagent's transcript
(`agent-transcripts/<id>/subagents/*.jsonl`) is left out: its "user" is the parent agent.
The transcript does not name its working directory: the workspace folder's name is the
workspace path with every character other than a letter or digit turned into `-`, and is
resolved by looking for the folders that spell it (an ambiguous or missing one is not
resolved).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from zmwatch.adapters.common import (
    Context,
    Turns,
    folder_name,
    in_subagent_folder,
    only_elements,
    text_of,
    turn,
)

NAME = "cursor"
_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.S)
_TIMESTAMP = re.compile(r"<timestamp>.*?</timestamp>", re.S)
_REDACTED = re.compile(r"^(?:\s*\[REDACTED\])+|(?:\s*\[REDACTED\])+\s*$")
_CONTROL = frozenset({"turn_ended"})  # entries without a role that hold nothing to send


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


def reader(path: Path) -> Reader:
    return Reader(subagent=in_subagent_folder(path))


def user_words(text: str) -> str:
    """The words of a user's text: what `<user_query>` holds, else the text without Cursor's
    timestamp ("" when only context remains)."""
    queries = _QUERY.findall(text)
    if queries:
        return "\n\n".join(query.strip() for query in queries)
    text = _TIMESTAMP.sub("", text)
    return "" if only_elements(text) else text


class Reader:
    def __init__(self, *, subagent: bool = False) -> None:
        self.subagent = subagent

    def turns(self, entry: dict[str, Any]) -> Turns:
        role, message = entry.get("role"), entry.get("message")
        if role is None and entry.get("type") in _CONTROL:
            return []
        if role not in ("user", "assistant", "system", "tool") or not isinstance(message, dict):
            return None
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return None
        if self.subagent or role not in ("user", "assistant"):
            return []
        found = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                text = _REDACTED.sub("", text_of([block]))
                found += turn(role, user_words(text) if role == "user" else text)
        return found
