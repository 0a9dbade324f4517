"""Codex: ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl, entries `{timestamp, type, payload}`.

The first entry, `session_meta`, names the session (`id`) and its working directory (`cwd`).
Only `response_item` messages of the user and the assistant are kept, their `input_text` and
`output_text` blocks; reasoning, function calls and their output are skipped, and so is the
context Codex writes in the user's name: AGENTS.md instructions, blocks made only of tags
(`<environment_context>`, `<user_instructions>`, …), and the IDE's preamble, of which only
the request is kept. A user's own words starting with `<` are kept. `event_msg` entries repeat
the messages and are skipped too. A subagent's rollout (`session_meta` whose `source` is a
subagent) is left out whole: its "user" is the agent that started it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zmwatch.adapters.common import Context, Turns, head_entries, only_elements, text_of, turn

NAME = "codex"
_KNOWN = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication_metadata",
    }
)
_RESPONSE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "tool_search_call",
        "tool_search_output",
        "web_search_call",
        "image_generation_call",
        "ghost_snapshot",
        "agent_message",
        "compaction",
    }
)
_TEXT_BLOCKS = ("input_text", "output_text")
_IDE_CONTEXT = "# Context from my IDE setup:"
_IDE_REQUEST = "## My request for Codex:"


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


def reader(path: Path) -> Reader:
    return Reader()


def user_words(text: str) -> str:
    """The words of a user message, "" for context Codex injected."""
    text = text.strip()
    if text.startswith(_IDE_CONTEXT):
        _, found, request = text.partition(_IDE_REQUEST)
        return request.strip() if found else ""
    if text.startswith("# AGENTS.md instructions") or only_elements(text):
        return ""
    return text


def is_subagent(source: Any) -> bool:
    """Whether a session_meta's `source` says a subagent runs the session."""
    if isinstance(source, dict):
        return "subagent" in source
    return isinstance(source, str) and source.startswith("subagent")


class Reader:
    """One rollout's entries, in order; a subagent's session (from its session_meta on) is
    left out."""

    def __init__(self) -> None:
        self.subagent = False

    def turns(self, entry: dict[str, Any]) -> Turns:
        kind, payload = entry.get("type"), entry.get("payload")
        if kind not in _KNOWN or not isinstance(payload, dict):
            return None
        if kind == "session_meta":
            self.subagent = is_subagent(payload.get("source")) or is_subagent(
                payload.get("thread_source")
            )
            return []
        if kind != "response_item":
            return []
        if payload.get("type") not in _RESPONSE_ITEMS:
            return None
        role = payload.get("role")
        if self.subagent or payload.get("type") != "message" or role not in ("user", "assistant"):
            return []
        found = []
        for block in payload.get("content") or []:
            if isinstance(block, dict) and block.get("type") in _TEXT_BLOCKS:
                text = text_of([block])
                found += turn(role, user_words(text) if role == "user" else text)
        return found
