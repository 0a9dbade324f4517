"""What the adapters share: a transcript's context, a rendered turn, how a JSONL line is read,
and the text rules every agent needs (lone surrogates, injected elements, subagent folders)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Protocol

HEAD_LINES = 200  # how far into a transcript its working directory is looked for
# What some writers leave around a line: NUL padding (a file extended before it was written;
# Claude Code's own reader strips it), a byte-order mark, the CR of a CRLF.
_PADDING = " \t\r\n\x00\ufeff"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# One element, `<tag …>…</tag>`, with the lowercase name agents give the context they inject,
# or one tag alone (Codex puts an image between `<image name=…>` and `</image>` blocks).
_ELEMENT = re.compile(r"\s*<([a-z][a-z0-9_-]*)(?:\s[^>]*)?>.*?</\1>\s*", re.S)
_TAG = re.compile(r"\s*</?[a-z][a-z0-9_-]*(?:\s[^>]*)?>\s*")

# What a reader answers for one entry: the turns it keeps ([] for an entry of a known kind
# that holds nothing to send), or None for an entry it does not recognise.
Turns = Optional[list[str]]


class Reader(Protocol):
    def turns(self, entry: dict[str, Any]) -> Turns: ...


def folder_name(path: str) -> str:
    """How Claude Code and Cursor name a project's folder: its path with every character other
    than a letter or digit as `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


@dataclass(frozen=True)
class Context:
    cwd: str
    conversation_id: str


def clean(text: str) -> str:
    """Text that encodes as UTF-8: a lone surrogate (what JavaScript writes for an emoji cut in
    half) becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def turn(role: str, text: str, source: str = "") -> list[str]:
    """A turn as the chunk shows it ("user: …", or "user (queued): …" for words that came
    another way than a typed prompt), or nothing for blank text."""
    text = clean(text).strip()
    label = f"{role} ({source})" if source else role
    return [f"{label}: {text}"] if text else []


def parse_line(raw: bytes) -> Any:
    """A JSONL line's value, decoded as UTF-8 with a bad byte replaced and the padding around
    it taken off; ValueError when it is not JSON."""
    return json.loads(raw.decode("utf-8", "replace").strip(_PADDING))


def only_elements(text: str) -> bool:
    """Whether the text is nothing but `<tag>…</tag>` elements: context an agent injected in
    the user's name (a user's own words starting with `<`, like `<Button> loses focus`, are
    not)."""
    rest = text.strip()
    if _TAG.fullmatch(rest):
        return True
    while rest:
        match = _ELEMENT.match(rest)
        if match is None:
            return False
        rest = rest[match.end() :]
    return bool(text.strip())


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the `text` of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return ""


def in_subagent_folder(path: Path) -> bool:
    """A transcript a subagent wrote (`…/<session>/subagents/*.jsonl`): its "user" is the
    agent that started it, never the person."""
    return path.parent.name == "subagents"


def head_entries(path: Path) -> Iterator[dict[str, Any]]:
    """The first complete JSONL entries of a transcript that are JSON objects."""
    try:
        with path.open("rb") as lines:
            for number, line in enumerate(lines):
                if number >= HEAD_LINES or not line.endswith(b"\n"):
                    return
                try:
                    entry = parse_line(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    yield entry
    except OSError:
        return
