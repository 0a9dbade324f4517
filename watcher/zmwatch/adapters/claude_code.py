"""Claude Code: ~/.claude/projects/<project>/<session>.jsonl, one entry per line.

Kept: the person's prompts; the slash commands' arguments; messages typed while the agent
works (`queue-operation` enqueue entries, 2.1.3x, and `queued_command` attachments, later
versions: one turn when both say it); the answers chosen for the agent's questions, the
feedback given when rejecting a tool call and the plan approved on leaving plan mode (all in
tool results); the assistant's `text` blocks and the plan it asks approval for.
Left out: thinking, tool calls and other tool results, meta entries, compact summaries,
subagent side chains (`isSidechain`, `<session>/subagents/`), notices of background tasks,
interruptions, command output, `!` shell mode, `<synthetic>` messages and API errors. Every
entry names its working directory (`cwd`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zmwatch.adapters.claude_words import (
    approved_plan,
    is_plan_file,
    prompt_words,
    tool_result_words,
)
from zmwatch.adapters.common import (
    Context,
    Turns,
    head_entries,
    in_subagent_folder,
    text_of,
    turn,
)

NAME = "claude-code"
# Entry kinds that hold nothing to send: bookkeeping, progress, titles, hook summaries.
_QUIET = frozenset(
    {
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "last-prompt",
        "mode",
        "custom-title",
        "ai-title",
        "agent-name",
        "tag",
        "pr-link",
        "worktree-state",
    }
)
_KNOWN = _QUIET | {"user", "assistant", "queue-operation", "attachment"}
_QUEUED_KEPT = 20  # queued messages remembered, to send each once when it comes back


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


def reader(path: Path) -> Reader:
    return Reader(side_chain=in_subagent_folder(path))


class Reader:
    """One transcript's entries, in order. What it remembers: the queued messages already
    sent, so that the attachment or enqueue entry repeating one is not sent again, nor the
    prompt that submits it (until the agent answers or another prompt comes); and the plans
    the agent proposed, so an approval can name its plan."""

    def __init__(self, *, side_chain: bool = False) -> None:
        self.side_chain = side_chain
        self.queued: list[str] = []  # sent, their attachment (or enqueue) not seen yet
        self.unsubmitted: list[str] = []  # sent, a prompt may still submit them
        self.plans: dict[str, str] = {}  # ExitPlanMode call id -> the plan it proposed ("")
        self.plan_file = ""  # the last plan the agent wrote to a file

    def turns(self, entry: dict[str, Any]) -> Turns:
        kind = entry.get("type")
        if kind not in _KNOWN:
            return None
        if kind in _QUIET or self.side_chain or entry.get("isSidechain"):
            return []
        if kind == "queue-operation":
            if entry.get("operation") == "enqueue":
                return self._queued(entry.get("content"))
            return []
        if kind == "attachment":
            attachment = entry.get("attachment")
            if not isinstance(attachment, dict):
                return None
            queued = attachment.get("type") == "queued_command"
            if queued and attachment.get("commandMode") in ("prompt", None):
                return self._queued(attachment.get("prompt"))
            return []
        message = entry.get("message")
        if not isinstance(message, dict):
            return None
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return None
        if entry.get("isMeta") or entry.get("isCompactSummary"):
            return []
        if kind == "user":
            return self._user(content, entry.get("toolUseResult"))
        if message.get("model") == "<synthetic>" or entry.get("isApiErrorMessage"):
            return []
        return self._assistant(content)

    def _queued(self, content: Any) -> list[str]:
        words = prompt_words(text_of(content))
        if words is None:
            return []
        if words[0] in self.queued:
            self.queued.remove(words[0])
            return []
        self.queued = [*self.queued, words[0]][-_QUEUED_KEPT:]
        self.unsubmitted = [*self.unsubmitted, words[0]][-_QUEUED_KEPT:]
        return turn("user", words[0], "queued")

    def _user(self, blocks: list[Any], result: Any) -> list[str]:
        found: list[str] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                words = prompt_words(block["text"])
                if words is None:
                    continue
                if words[0] in self.unsubmitted:  # a queued message, submitted: sent already
                    del self.unsubmitted[: self.unsubmitted.index(words[0]) + 1]
                    continue
                self.unsubmitted = []
                found += turn("user", *words)
            elif block.get("type") == "tool_result":
                found += self._tool_result(block, result)
        return found

    def _tool_result(self, block: dict[str, Any], result: Any) -> list[str]:
        said = tool_result_words(block, result)
        found = [text for words, source in said for text in turn("user", words, source)]
        if said or block.get("is_error"):
            return found
        proposed = self.plans.pop(str(block.get("tool_use_id")), None)
        plan = approved_plan(block, result)
        if proposed is None and not plan:
            return found  # not the answer to ExitPlanMode
        if plan and plan == proposed:
            plan = "the plan above"
        plan = plan or proposed or self.plan_file or "approved"
        return turn("user", plan, "approved the plan")

    def _assistant(self, blocks: list[Any]) -> list[str]:
        found: list[str] = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                found += turn("assistant", block["text"])
            elif block.get("type") == "tool_use":
                found += self._tool_use(block)
        if found:
            self.unsubmitted = []  # the agent answered: no prompt submits a queued one now
        return found

    def _tool_use(self, block: dict[str, Any]) -> list[str]:
        arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
        if block.get("name") == "ExitPlanMode":
            plan = arguments.get("plan")
            plan = plan.strip() if isinstance(plan, str) else ""
            self.plans[str(block.get("id"))] = plan
            return turn("assistant", plan, "plan for approval")
        if is_plan_file(arguments.get("file_path")) and isinstance(arguments.get("content"), str):
            self.plan_file = arguments["content"].strip()
        return []
