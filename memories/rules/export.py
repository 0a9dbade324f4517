"""Approved rules in the files coding agents read, so a repository can check them in:

- claude-md: a CLAUDE.md section (Claude Code);
- agents-md: an AGENTS.md section (Codex and the other tools that read AGENTS.md);
- cursor-mdc: a Cursor project rule (`.cursor/rules/<name>.mdc`), always applied.

Pure functions over (scope name, rule texts); each rule is one list item on one line.
"""

from __future__ import annotations

from collections.abc import Sequence

FORMATS = ("claude-md", "agents-md", "cursor-mdc")


def _items(texts: Sequence[str]) -> list[str]:
    return [f"- {' '.join(text.split())}" for text in texts]


def _note(scope: str) -> str:
    return (
        f"<!-- Approved in zero-memory (scope {scope}); export again with "
        "`manage.py rules_export` rather than editing here. -->"
    )


def rules_file(*, format: str, scope: str, texts: Sequence[str]) -> str:
    """The rules of scope `scope` (its name) as the tool of `format` reads them."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    if format == "cursor-mdc":
        front = [
            "---",
            f"description: Team rules of {' '.join(scope.split())}, approved in zero-memory",
            "globs:",
            "alwaysApply: true",
            "---",
        ]
        return "\n".join([*front, "", *_items(texts)]) + "\n"
    heading = "## Team rules" if format == "claude-md" else "## Rules"
    return "\n".join([heading, "", _note(scope), "", *_items(texts)]) + "\n"
