"""Claude Code: ~/.claude/projects/<project>/<session>.jsonl, one entry per line.

User and assistant entries carry `message.content`, a string or a list of blocks; only `text`
blocks are kept (never `thinking`, `tool_use` or `tool_result`). Summaries, meta entries (slash
commands and their output), compact summaries and subagent side chains are skipped. Every entry
names its working directory (`cwd`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zmwatch.adapters.common import Context, head_entries, turn

NAME = "claude-code"
_COMMAND_TAGS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<system-reminder>",
    "<user-prompt-submit-hook>",
)


def root(home: Path) -> Path:
    return home / ".claude" / "projects"


def owns(path: Path, home: Path) -> bool:
    return path.suffix == ".jsonl" and root(home) in path.parents


def transcripts(home: Path) -> list[Path]:
    return sorted(root(home).glob("**/*.jsonl"))


def context(path: Path) -> Context | None:
    for entry in head_entries(path):
        if isinstance(entry.get("cwd"), str) and entry["cwd"]:
            return Context(cwd=entry["cwd"], conversation_id=entry.get("sessionId") or path.stem)
    return None


def turns(entry: dict[str, Any]) -> list[str]:
    if entry.get("type") not in ("user", "assistant"):
        return []
    if entry.get("isMeta") or entry.get("isCompactSummary") or entry.get("isSidechain"):
        return []
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
        return []
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
    else:
        return []
    found = []
    for text in texts:
        if not text.lstrip().startswith(_COMMAND_TAGS):
            found += turn(message["role"], text)
    return found
