"""Chunks: about `size` characters, cut where a transcript line ends, the next one opening with
the last lines of the one before; a line longer than a chunk split at its own line breaks."""

from __future__ import annotations

from zmwatch.chunker import Chunk, Chunker, Line, capped, tail_of


def lines_of(texts: list[str]) -> list[Line]:
    lines, offset = [], 0
    for text in texts:
        lines.append(Line(text, offset, offset + len(text) + 50))
        offset += len(text) + 50
    return lines


def test_the_product_defaults_are_about_16000_with_1500_of_overlap():
    chunker = Chunker(size=16_000, overlap=1_500)
    texts = [f"user: line {i} " + "x" * 380 for i in range(100)]
    chunks, rest = chunker.cut(lines_of(texts), flush=False)
    assert chunks and all(15_000 <= len(c.content) <= 16_000 for c in chunks)
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.content.startswith(before.tail)
        assert 1_000 <= len(before.tail) <= 1_500
    assert rest and len("\n\n".join(line.text for line in rest)) < 16_000


def test_a_chunk_ends_where_a_line_ends_and_carries_its_offset():
    lines = lines_of(["user: a" * 10, "assistant: b" * 10, "user: c" * 10])
    chunks, rest = Chunker(size=200, overlap=30).cut(lines, flush=False)
    assert [c.end for c in chunks] == [lines[1].end]
    assert chunks[0].content == lines[0].text + "\n\n" + lines[1].text
    assert rest == lines[2:]


def test_nothing_waits_when_flushed():
    lines = lines_of(["user: short", "assistant: also short"])
    chunker = Chunker(size=16_000, overlap=1_500)
    assert chunker.cut(lines, flush=False) == ([], lines)
    chunks, rest = chunker.cut(lines, flush=True)
    assert rest == [] and [c.content for c in chunks] == ["user: short\n\nassistant: also short"]
    assert chunker.carry == chunks[0].content  # shorter than the overlap: all of it


def test_the_overlap_starts_at_a_line_boundary():
    content = "user: first line\nsecond line is here\nthird"
    assert tail_of(content, 20) == "third"
    assert tail_of("no newline at all in this one", 10) == "in this one"[-10:]


def test_a_line_longer_than_a_chunk_is_split_at_its_line_breaks():
    long = Line("assistant: " + "\n".join(f"row {i:03d} " + "y" * 40 for i in range(60)), 100, 9000)
    chunks, rest = Chunker(size=1000, overlap=100).cut([long], flush=False)
    assert rest == [] and len(chunks) > 2
    assert all(len(c.content) <= 1000 for c in chunks)
    assert [c.end for c in chunks] == [100] * (len(chunks) - 1) + [9000]
    assert all(any(f"row {row:03d} " in c.content for c in chunks) for row in range(60))


def test_a_turn_past_the_cap_keeps_its_head_and_tail_and_says_what_was_cut():
    text = "a" * 50 + "b" * 900 + "c" * 50
    assert capped(text, 100) == "a" * 50 + "\n[… 900 characters cut …]\n" + "c" * 50
    assert capped(text, 1000) == text


def test_a_lone_surrogate_never_stops_the_hash():
    assert len(Chunk(content="x \ud83d y", end=0, tail="").hash) == 64
