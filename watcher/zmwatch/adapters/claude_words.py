"""Claude Code's text rules: which text of a user entry is the person's words, and the words a
person gave inside a tool result (answers to the agent's questions, the feedback given when
rejecting a tool call, the plan approved when leaving plan mode)."""

from __future__ import annotations

import re
from typing import Any, Optional

from zmwatch.adapters.common import only_elements, text_of

# Text Claude Code writes in the user's name that no one typed: notices of background tasks,
# interruptions, hook output, the output of a slash command, `!` shell mode (its command and
# output: never sent as the user's words, a token printed there included).
_NOTICES = (
    "<task-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<local-command-",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_BARE_COMMAND = re.compile(r"/[\w:.-]+")
_ANSWERED = "User has answered your questions:"
_ANSWER_PAIR = re.compile(r'"(.*?)"="(.*?)"(?=, "|\.\s|\.?$)', re.S)
_FEEDBACK = "the user said:\n"
_APPROVED_PLAN = re.compile(r"^## Approved Plan[^\n]*:\n", re.M)

Words = Optional[tuple[str, str]]  # (the words, where they came from: "" for a typed prompt)


def prompt_words(text: str) -> Words:
    """The words of a user's prompt, or None for text no one typed. A slash command's words
    are its arguments (a command without arguments has none)."""
    text = _REMINDER.sub("", text).strip()
    if not text or text.startswith(_NOTICES):
        return None
    name = _COMMAND_NAME.search(text)
    if name is not None or text.startswith("<command-message>"):
        args = _COMMAND_ARGS.search(text)
        words = args.group(1).strip() if args else ""
        return (words, name.group(1).strip() if name else "command") if words else None
    if only_elements(text) or _BARE_COMMAND.fullmatch(text):
        return None
    return text, ""


def answers(text: str, result: Any) -> list[str]:
    """The answers a person chose for the agent's questions (AskUserQuestion), each after its
    question: from the structured result, else from the tool result's text."""
    chosen = result.get("answers") if isinstance(result, dict) else None
    if isinstance(chosen, dict):
        notes = result.get("annotations")
        notes = notes if isinstance(notes, dict) else {}
        pairs = [
            (str(question), str(answer) + _notes(notes.get(question)))
            for question, answer in chosen.items()
        ]
    elif text.startswith(_ANSWERED):
        pairs = _ANSWER_PAIR.findall(text[len(_ANSWERED) :])
    else:
        pairs = []
    return [f"{question} → {answer}" for question, answer in pairs]


def _notes(annotation: Any) -> str:
    """The notes a person wrote beside an answer, as they follow it."""
    notes = annotation.get("notes") if isinstance(annotation, dict) else None
    return f" (notes: {notes.strip()})" if isinstance(notes, str) and notes.strip() else ""


def tool_result_words(block: dict[str, Any], result: Any) -> list[tuple[str, str]]:
    """What the person said inside one tool result, as (words, source) pairs."""
    text = text_of(block.get("content")).strip()
    chosen = answers(text, result)
    if chosen:
        return [(answer, "answer") for answer in chosen]
    if _FEEDBACK in text:
        return [(text.split(_FEEDBACK, 1)[1], "rejected the tool call")]
    return []


def approved_plan(block: dict[str, Any], result: Any) -> str:
    """The plan a tool result says was approved, when it carries it ("" when not)."""
    text = text_of(block.get("content"))
    heading = _APPROVED_PLAN.search(text)
    if heading is not None:
        return text[heading.end() :].strip()
    plan = result.get("plan") if isinstance(result, dict) else None
    return plan.strip() if isinstance(plan, str) else ""


def is_plan_file(path: Any) -> bool:
    """A markdown file an agent writes its plan to (Claude Code's own under `plans/`, or one
    the agent names a plan)."""
    if not isinstance(path, str) or not path.endswith(".md"):
        return False
    parts = re.split(r"[\\/]", path)
    return "plans" in parts[:-1] or "plan" in parts[-1].lower()
