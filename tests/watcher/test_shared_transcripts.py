"""The shared set of real transcripts (Claude Code, Codex, Cursor and synthetic repros, kept
outside the repository beside it: third-party data), read with the watcher's adapters: every
file is read without a stop and of a format its adapter knows, and each row of the set's
README table holds (what a correct reader must keep, and must not keep)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from zmwatch.adapters import claude_code, codex, cursor

from tests.watcher.reading import read_entries, read_turns


def shared_folder() -> Path | None:
    candidates = [
        os.environ.get("ZM_SHARED_TRANSCRIPTS"),
        Path(settings.BASE_DIR).parent / "shared" / "transcripts",
        "/work/shared/transcripts",
    ]
    for candidate in candidates:
        if candidate and (Path(candidate) / "README.md").is_file():
            return Path(candidate)
    return None


SHARED = shared_folder()
pytestmark = pytest.mark.skipif(
    SHARED is None,
    reason="no shared transcripts: set ZM_SHARED_TRANSCRIPTS, or put them in ../shared/transcripts",
)
AGENTS = {"claude-code": claude_code, "codex": codex, "cursor": cursor}
REPRO_PREFIXES = {"cc-": claude_code, "claude_code": claude_code, "codex": codex, "cursor": cursor}


def adapter_of(path: Path):
    """The adapter of a shared file: by its agent's folder, a repro by its name."""
    folder = path.relative_to(SHARED).parts[0]
    if folder in AGENTS:
        return AGENTS[folder]
    found = [a for prefix, a in REPRO_PREFIXES.items() if path.name.startswith(prefix)]
    assert found, f"which agent wrote {path.name}? Name it in REPRO_PREFIXES"
    return found[0]


def turns(path: Path) -> list[str]:
    return read_turns(adapter_of(path), path)


def users(path: Path) -> list[str]:
    return [turn for turn in turns(path) if turn.startswith("user")]


def said_by(role: str, texts: list[str], words: str) -> int:
    return sum(words in turn for turn in texts if turn.startswith(role))


def check_subagent(path: Path) -> None:
    texts = turns(path)
    assert said_by("user", texts, "websearch to learn how to fastest setup credo") == 1
    answers = [turn for turn in texts if turn.startswith("user (answer)")]
    assert [answer.rsplit("→ ", 1)[1] for answer in answers] == [
        "No rig",
        "Credo + Dialyxir + mix_audit",
    ]
    [plan] = [turn for turn in texts if turn.startswith("user (approved the plan)")]
    assert "# Plan: Setup Code Quality Tools" in plan
    assert not any("[Request interrupted by user]" in turn for turn in texts)


def check_queue_operations(path: Path) -> None:
    texts = users(path)
    assert said_by("user", texts, "check again") == 1
    assert said_by("user", texts, "new beads for the epic were added. tackle them") == 1
    assert not any("<task-notification>" in turn for turn in turns(path))


def check_codex_session(path: Path) -> None:
    texts = turns(path)
    assert [turn.split(":")[0] for turn in texts] == ["user", "assistant"]
    assert not any("<environment_context>" in turn for turn in texts)


def check_codex_subagents(path: Path) -> None:
    """No prompt of a subagent's session (from its session_meta on) is kept as the user's."""
    subagent = False
    for raw, answer in zip(path.read_text().splitlines(), read_entries(codex, path), strict=True):
        entry = json.loads(raw)
        if entry.get("type") == "session_meta":
            subagent = isinstance(entry["payload"].get("source"), dict)
        if subagent:
            assert not [turn for turn in answer or [] if turn.startswith("user")], raw[:200]


def check_cursor_session(path: Path) -> None:
    texts = turns(path)
    assert len(users(path)) == 6
    assert said_by("assistant", texts, "requirements.txt") >= 3
    assert not any(turn.split(": ", 1)[1].strip() == "[REDACTED]" for turn in texts)
    assert not any(turn.rstrip().endswith("[REDACTED]") for turn in texts)


def check_midturn_attachment(path: Path) -> None:
    assert said_by("user", users(path), "the first mid-turn message") == 1


def check_go_twice(path: Path) -> None:
    assert users(path).count("user: go") == 2
    assert not any("No response requested." in turn for turn in turns(path))


def check_nothing(path: Path) -> None:
    assert turns(path) == []


def check_cursor_cli(path: Path) -> None:
    assert users(path) == ["user: hello"]
    assert not any("<timestamp>" in turn for turn in turns(path))


def check_no_user(path: Path) -> None:
    assert users(path) == []


def check_lone_surrogate(path: Path) -> None:
    assert said_by("user", users(path), "never force-push main") == 1
    for turn in turns(path):
        turn.encode("utf-8")  # what is sent encodes


def check_leading_nul(path: Path) -> None:
    assert said_by("user", users(path), "deploy only on Fridays") == 1


# The README's rows, by their file cell: how each is checked.
ROWS = {
    "claude-code/spotter/subagent.jsonl": check_subagent,
    "claude-code/spotter/258c7280-lines488-610.jsonl": check_queue_operations,
    "claude-code/cc-2.1.284-midturn-shape.jsonl": check_midturn_attachment,
    "claude-code/cc-2.1.226-verbatim-lines.jsonl": check_go_twice,
    "claude-code/spotter/*/subagents/*": check_nothing,
    "codex/rollout-2026-06-05…jsonl": check_codex_session,
    "codex/jazzyalex-stage0-small.jsonl": check_codex_subagents,
    "cursor/43afba9c…/…jsonl": check_cursor_session,
    "cursor/cursor-cli-2026-07-verbatim.jsonl": check_cursor_cli,
    "cursor/jazzy-parent/subagents/jazzy-child.jsonl": check_no_user,
    "synthetic-repros/cc-lone-surrogate.jsonl": check_lone_surrogate,
    "synthetic-repros/cc-leading-nul.jsonl": check_leading_nul,
}


def readme_rows() -> list[str]:
    """The file cell of each row of the README's table."""
    text = (SHARED / "README.md").read_text(encoding="utf-8") if SHARED else ""
    cells = re.findall(r"^\| *([^|]+?) *\|", text, re.M)
    return [cell for cell in cells if "/" in cell]


def test_the_table_and_these_checks_name_the_same_rows():
    assert sorted(readme_rows()) == sorted(ROWS)


@pytest.mark.parametrize("row", sorted(ROWS))
def test_a_row_of_the_table_holds(row):
    files = sorted(p for p in SHARED.glob(row.replace("…", "*")) if p.is_file())
    assert files, f"no file matches {row}"
    for path in files:
        ROWS[row](path)


def shared_files() -> list[Path]:
    return sorted(SHARED.rglob("*.jsonl")) if SHARED else []


@pytest.mark.parametrize("path", shared_files(), ids=lambda p: str(p.relative_to(SHARED)))
def test_every_file_is_read_and_its_format_known(path):
    answers = read_entries(adapter_of(path), path)
    assert answers, path
    unknown = answers.count(None)
    assert unknown * 2 <= len(answers), f"{unknown} of {len(answers)} entries not recognised"


# What each entry of the repro case files must give, read alone, by its `_case`.
CASES = {
    "CC queued mid-turn message (2.1.284 attachment)": [
        "user (queued): stop, use the staging DB instead"
    ],
    "CC queued mid-turn message (2.1.39 queue-operation only)": [
        "user (queued): new beads for the epic were added. tackle them"
    ],
    "CC AskUserQuestion answer": [
        "user (answer): Which tools should we set up? → Credo + Dialyxir + mix_audit"
    ],
    "CC tool rejection with feedback": [
        "user (rejected the tool call): no connection pooling, keep it simple"
    ],
    "CC slash command with args": ["user (/review): focus on the auth module; we never log tokens"],
    "CC ! shell mode output": [],
    "CC ! shell mode output 2": [],
    "CC task notification": [],
    "CC synthetic assistant": [],
    "CC API error": [],
    "CC ExitPlanMode plan": [
        "assistant (plan for approval): # Plan\n1. Move webhook work to billing_events queue"
    ],
    "Codex genuine prompt starting with '<'": ["user: <Button> loses focus after submit, fix it"],
    "Codex IDE wrapper": ["user: why does docker build fail?"],
    "Cursor [REDACTED] block": [],
    "Cursor timestamp wrapper": ["user: hello"],
}


def test_each_repro_case_gives_what_it_must():
    seen = set()
    for path in sorted(SHARED.glob("synthetic-repros/*-cases.jsonl")):
        adapter = adapter_of(path)
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            case = entry["_case"]
            assert case in CASES, f"a new case: say what {case!r} must give"
            assert adapter.reader(path).turns(entry) == CASES[case], case
            seen.add(case)
    assert seen == set(CASES)


def test_the_byte_level_repros_outside_the_table_are_read_with_their_text():
    latin1 = users(SHARED / "synthetic-repros" / "cc-latin1-byte.jsonl")
    assert latin1 == ["user: before", "user: caf\ufffd: keep this decision"]
    crlf = turns(SHARED / "synthetic-repros" / "cc-crlf-partial-last.jsonl")
    assert crlf == ["user: windows line one", "assistant: reply two"]  # the torn line waits
