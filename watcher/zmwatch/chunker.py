"""Cutting a transcript's turns into chunks: about `size` characters each, the next one opening
with about `overlap` characters of the one before (cut at a line boundary), so that what is
said across a cut is still read whole once.

A chunk ends where a transcript line ends, and carries that line's end offset: once the server
has acknowledged the chunk, the transcript is delivered up to there. A single line too long for
one chunk is split at its own line breaks into pieces that are all cut together; only the last
piece carries the line's end, the others its start. A turn longer than the per-turn cap keeps
its head and its tail, with a note of how much was cut between them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Line:
    """The user and assistant text of one transcript line, and where that line lies."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Chunk:
    content: str
    end: int
    tail: str  # what the next chunk opens with

    @property
    def hash(self) -> str:
        # surrogatepass: a lone surrogate, were one left in the text, never stops capture
        return hashlib.sha256(self.content.encode("utf-8", "surrogatepass")).hexdigest()


def capped(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its head and tail (about `limit`
    characters in all) around a note saying how many were cut."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit:,} characters cut …]\n{text[-tail:]}"


def tail_of(content: str, overlap: int) -> str:
    """About the last `overlap` characters, from the start of a line when there is one."""
    if overlap <= 0:
        return ""
    if len(content) <= overlap:
        return content
    piece = content[-overlap:]
    newline = piece.find("\n")
    return piece[newline + 1 :] if 0 <= newline < len(piece) - 1 else piece


def _joined(carry: str, texts: list[str]) -> str:
    return SEPARATOR.join([carry, *texts] if carry else texts)


def split_text(text: str, room: int) -> list[str]:
    """`text` in pieces of at most `room` characters, cut after a newline where one fits."""
    pieces = []
    while len(text) > room:
        cut = text.rfind("\n", 0, room)
        cut = cut + 1 if cut > 0 else room
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


@dataclass
class Chunker:
    size: int
    overlap: int
    carry: str = ""

    def cut(self, lines: list[Line], *, flush: bool) -> tuple[list[Chunk], list[Line]]:
        """The chunks these lines fill, and the lines left waiting for more (none when
        `flush`)."""
        chunks: list[Chunk] = []
        rest = list(lines)
        while rest and (flush or self._length(rest) >= self.size):
            count = 1
            while count < len(rest) and self._length(rest[: count + 1]) <= self.size:
                count += 1
            taken, rest = rest[:count], rest[count:]
            content = _joined(self.carry, [line.text for line in taken])
            if len(content) > self.size:  # one line longer than a chunk
                chunks += self._split(taken[0])
            else:
                chunks.append(self._chunk(content, taken[-1].end))
        return chunks, rest

    def _length(self, lines: list[Line]) -> int:
        return len(_joined(self.carry, [line.text for line in lines]))

    def _chunk(self, content: str, end: int) -> Chunk:
        chunk = Chunk(content=content, end=end, tail=tail_of(content, self.overlap))
        self.carry = chunk.tail
        return chunk

    def _split(self, line: Line) -> list[Chunk]:
        room = max(1, self.size - self.overlap - len(SEPARATOR))
        pieces = split_text(line.text, room)
        return [
            self._chunk(_joined(self.carry, [piece]), line.end if last else line.start)
            for last, piece in ((i == len(pieces) - 1, p) for i, p in enumerate(pieces))
        ]
