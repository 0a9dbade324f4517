"""Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl, entries `{timestamp, type, payload}`.

The first entry, `session_meta`, names the session (`id`) and its working directory (`cwd`).
Only `response_item` messages of the user and the assistant are kept, their `input_text` and
`output_text` blocks; reasoning, function calls and their output are skipped, and so are the
context blocks Codex writes in the user's name (environment context, instructions), which
open with a tag. `event_msg` entries repeat the messages and are skipped too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zmwatch.adapters.common import Context, head_entries, turn

NAME = "codex"
_INJECTED = ("<", "# AGENTS.md instructions")


def root(home: Path) -> Path:
    return home / ".codex" / "sessions"


def owns(path: Path, home: Path) -> bool:
    return (
        path.name.startswith("rollout-") and path.suffix == ".jsonl" and root(home) in path.parents
    )


def transcripts(home: Path) -> list[Path]:
    return sorted(root(home).glob("*/*/*/rollout-*.jsonl"))


def context(path: Path) -> Context | None:
    for entry in head_entries(path):
        payload = entry.get("payload")
        if entry.get("type") == "session_meta" and isinstance(payload, dict):
            cwd = payload.get("cwd")
            if isinstance(cwd, str) and cwd:
                return Context(cwd=cwd, conversation_id=str(payload.get("id") or path.stem))
    return None


def turns(entry: dict[str, Any]) -> list[str]:
    payload = entry.get("payload")
    if entry.get("type") != "response_item" or not isinstance(payload, dict):
        return []
    role = payload.get("role")
    if payload.get("type") != "message" or role not in ("user", "assistant"):
        return []
    found = []
    for block in payload.get("content") or []:
        if not isinstance(block, dict) or block.get("type") not in ("input_text", "output_text"):
            continue
        text = block.get("text")
        if isinstance(text, str) and not text.lstrip().startswith(_INJECTED):
            found += turn(role, text)
    return found
