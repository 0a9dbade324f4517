"""The token budget of context and briefings: counting, cutting, filling and rendering sections.

memories/recall/context.py says how the budget is shared.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from memories import embeddings
from memories.schemas import ContextOut, RowOut, SectionOut
from memories.selectors import disputed

RECENT_DAYS = 14
RECENT_KINDS = ("decision", "convention")
OPEN_LOOP_KINDS = ("task", "open_question")
SHARES = {"focus": 0.5, "recent": 0.25, "open_loops": 0.25}
# The scope's approved rules open the answer and may take up to this share of the budget; the
# sections share what they leave.
RULES_SECTION = "rules"
RULES_SHARE = 0.5
# A cut row shorter than this says too little to be worth its id and kind.
MIN_TRUNCATED_CONTENT_TOKENS = 8
ELLIPSIS = "…"
# Briefing: a memory recalled n times weighs 1 + RECALL_FACTOR * ln(1 + n) times more, so use
# counts without letting a few hot memories drown everything else.
RECALL_FACTOR = 0.25


# Counting is the tokenizer's whole pass over a text (0.1 ms for a chat turn), and a briefing or
# a context counts every line it shows; the same memories come back in the next call, so the
# counts of recent lines are kept per process, by their exact text (lines up to
# COUNT_CACHE_CHARS long: at most about 20 MB of text).
COUNT_CACHE_ENTRIES = 10_000
COUNT_CACHE_CHARS = 2_000
_counts: OrderedDict[str, int] = OrderedDict()
_counts_lock = threading.Lock()


def count_tokens(text: str) -> int:
    """The embedding model's WordPiece tokens in `text` (no [CLS] or [SEP]); a text of at most
    COUNT_CACHE_CHARS is counted once per process (its count kept among the last
    COUNT_CACHE_ENTRIES)."""
    return tokens_in([text])


def tokens_in(texts: Sequence[str]) -> int:
    """The tokens of all `texts`, each counted as `count_tokens` says. Those not counted lately
    are counted in one call of the tokenizer (as quick as `encode` for one text), which leaves
    the interpreter to the process's other threads meanwhile (`encode` holds it): a recall's
    activity row counts its hits after the answer, while the caller's next request may start."""
    found, missing = 0, []
    with _counts_lock:
        for text in texts:
            counted = _counts.get(text) if len(text) <= COUNT_CACHE_CHARS else None
            if counted is None:
                missing.append(text)
            else:
                _counts.move_to_end(text)
                found += counted
    if not missing:
        return found
    encodings = embeddings.tokenizer().encode_batch(missing, add_special_tokens=False)
    counts = [len(encoding.ids) for encoding in encodings]
    with _counts_lock:
        for text, counted in zip(missing, counts, strict=True):
            if len(text) <= COUNT_CACHE_CHARS:
                _counts[text] = counted
        while len(_counts) > COUNT_CACHE_ENTRIES:
            _counts.popitem(last=False)
    return found + sum(counts)


def _cut(text: str, tokens: int) -> str:
    """The longest prefix of `text` that ends at the end of its first `tokens` tokens."""
    offsets = embeddings.tokenizer().encode(text, add_special_tokens=False).offsets
    if tokens <= 0 or not offsets:
        return ""
    return text[: offsets[min(tokens, len(offsets)) - 1][1]]


@dataclass(frozen=True)
class Candidate:
    pk: int
    id: str
    kind: str
    scope: str
    content: str
    age_days: float
    score: float | None = None
    disputed: bool = False
    stale: bool = False
    group: str = ""  # the entity of the task it is about (build_context), "" for none


@dataclass
class Row:
    candidate: Candidate
    content: str
    truncated: bool
    line: str
    tokens: int

    def answer(self) -> RowOut:
        candidate = self.candidate
        return RowOut(
            id=candidate.id,
            kind=candidate.kind,
            scope=candidate.scope,
            content=self.content,
            truncated=self.truncated,
            tokens=self.tokens,
            score=candidate.score,
            age_days=round(candidate.age_days, 2),
            disputed=candidate.disputed,
            stale=candidate.stale,
            group=candidate.group or None,
        )


@dataclass
class Section:
    name: str
    title: str
    share: float
    candidates: list[Candidate]
    budget: int = 0
    rows: list[Row] = field(default_factory=list)
    next_candidate: int = 0

    @property
    def heading(self) -> str:
        return f"## {self.title}"

    @property
    def groups(self) -> list[str]:
        """The groups of its rows, in the order of their best row."""
        return list(dict.fromkeys(row.candidate.group for row in self.rows if row.candidate.group))

    @property
    def tokens(self) -> int:
        if not self.rows:
            return 0
        headings = count_tokens(self.heading) + sum(map(_group_tokens, self.groups))
        return headings + sum(row.tokens for row in self.rows)

    def shown(self) -> list[tuple[str, list[Row]]]:
        """Its rows as shown: those of no group first, then each group under its heading, each
        part in the order the rows were chosen (best first). Without groups, one part."""
        parts = [("", [row for row in self.rows if not row.candidate.group])]
        parts += [
            (group, [row for row in self.rows if row.candidate.group == group])
            for group in self.groups
        ]
        return [(group, rows) for group, rows in parts if rows]

    def answer(self) -> SectionOut:
        return SectionOut(
            name=self.name,
            title=self.title,
            budget=self.budget,
            tokens=self.tokens,
            rows=[row.answer() for _, rows in self.shown() for row in rows],
        )


@dataclass
class Context:
    topic: str | None
    max_tokens: int
    tokens: int
    sections: list[Section]
    markdown: str

    def answer(self) -> ContextOut:
        return ContextOut(
            topic=self.topic,
            max_tokens=self.max_tokens,
            tokens=self.tokens,
            sections=[section.answer() for section in self.sections],
            markdown=self.markdown,
        )

    def as_dict(self) -> dict[str, Any]:
        return self.answer().model_dump(mode="json")

    def result_ids(self) -> list[dict[str, Any]]:
        return [
            {"id": row.candidate.id, "score": row.candidate.score, "section": section.name}
            for section in self.sections
            for row in section.rows
        ]


def _group_heading(group: str) -> str:
    return f"### {' '.join(group.split())}"


def _group_tokens(group: str) -> int:
    return count_tokens(_group_heading(group))


def _label(candidate: Candidate) -> str:
    return f"{candidate.kind}, disputed" if candidate.disputed else candidate.kind


def _line(candidate: Candidate, content: str) -> str:
    # One line per memory: whitespace inside the content becomes single spaces (the same
    # tokens: the tokenizer drops whitespace), so the markdown list stays a list.
    return f"- [{_label(candidate)}] {' '.join(content.split())} ({candidate.id})"


def _whole(candidate: Candidate) -> Row:
    """The candidate's whole line. Where lines add up (`_lines_add_up`) its tokens are those of
    its parts: the memory's text is then counted once per process (recall's activity rows count
    the same texts), not again in every line that shows it."""
    line = _line(candidate, candidate.content)
    if not _lines_add_up():
        return Row(candidate, candidate.content, False, line, count_tokens(line))
    tokens = (
        count_tokens(f"- [{_label(candidate)}]")
        + count_tokens(candidate.content)
        + count_tokens(f"({candidate.id})")
    )
    return Row(candidate, candidate.content, False, line, tokens)


def _truncated(candidate: Candidate, room: int) -> Row | None:
    """The candidate cut to fit `room` tokens, or None when too little of it would fit."""
    frame = count_tokens(_line(candidate, ELLIPSIS))  # everything but the content
    keep = room - frame
    while keep >= MIN_TRUNCATED_CONTENT_TOKENS:
        content = _cut(candidate.content, keep).rstrip() + ELLIPSIS
        line = _line(candidate, content)
        tokens = count_tokens(line)
        if tokens <= room:
            return Row(candidate, content, True, line, tokens)
        keep -= tokens - room  # a cut word can split into more pieces; shrink and retry
    return None


def _fill(section: Section, room: int, shown: set[str]) -> int:
    """Add rows in order while they fit in `room`; returns the tokens used."""
    used = 0
    heading = count_tokens(section.heading)
    while section.next_candidate < len(section.candidates):
        candidate = section.candidates[section.next_candidate]
        if candidate.id in shown:
            section.next_candidate += 1
            continue
        overhead = 0 if section.rows else heading
        if candidate.group and candidate.group not in section.groups:
            overhead += _group_tokens(candidate.group)
        row = _whole(candidate)
        if overhead + row.tokens > room - used:
            row = _truncated(candidate, room - used - overhead)
            if row is not None:
                section.rows.append(row)
                shown.add(candidate.id)
                used += overhead + row.tokens
            return used  # the section is full; the truncated row, if any, stays last
        section.rows.append(row)
        shown.add(candidate.id)
        used += overhead + row.tokens
        section.next_candidate += 1
    return used


def _allot(sections: list[Section], available: int) -> None:
    shown: set[str] = set()
    if sections and sections[0].name == RULES_SECTION:
        rules, sections = sections[0], sections[1:]
        available -= _fill(rules, int(available * RULES_SHARE), shown)
        rules.budget = rules.tokens
    carry = 0
    for section in sections:
        section.budget = int(available * section.share) + carry
        carry = section.budget - _fill(section, section.budget, shown)
    # Whatever the last sections left unused goes back, in order, to sections with more to say.
    left = available - sum(section.tokens for section in sections)
    for section in sections:
        if left <= 0:
            break
        if section.rows and section.rows[-1].truncated:
            before = section.tokens
            row = section.rows.pop()  # give its tokens back and try it whole, or cut longer
            shown.discard(row.candidate.id)
            left += before - section.tokens  # its own, and a heading it alone needed
        left -= _fill(section, left, shown)
        section.budget = max(section.budget, section.tokens)


def _render(title: str, sections: list[Section]) -> str:
    parts = [f"# {title}"]
    for section in sections:
        if section.rows:
            parts.append("")
            parts.append(section.heading)
            for group, rows in section.shown():
                if group:
                    parts.append(_group_heading(group))
                parts.extend(row.line for row in rows)
    return "\n".join(parts) + "\n"


def _mark_disputed(sections: list[Section], marked: Collection[int] | None = None) -> None:
    """Flag the candidates an open review-queue item names: those of `marked` when the caller
    knows them all already, else asked (one query for all sections)."""
    if marked is None:
        marked = disputed(c.pk for section in sections for c in section.candidates)
    for section in sections:
        section.candidates = [
            replace(c, disputed=True) if c.pk in marked else c for c in section.candidates
        ]


@cache
def _lines_add_up() -> bool:
    """Whether the tokenizer splits at whitespace before anything else (BERT's WordPiece does:
    whitespace is never a token nor part of one), so a text's count is the sum of its lines'."""
    from tokenizers import pre_tokenizers

    return isinstance(embeddings.tokenizer().pre_tokenizer, pre_tokenizers.BertPreTokenizer)


def _markdown_tokens(title: str, sections: list[Section], markdown: str) -> int:
    """The markdown's tokens: the sum of its lines' counts, already made, where they add up (a
    second pass of the tokenizer over the whole answer cost as much as counting its lines);
    counted again otherwise (another model's tokenizer)."""
    if not _lines_add_up():
        return count_tokens(markdown)
    return count_tokens(f"# {title}") + sum(section.tokens for section in sections)


def assemble(
    *,
    title: str,
    topic: str | None,
    max_tokens: int,
    sections: list[Section],
    disputed_ids: Collection[int] | None = None,
) -> Context:
    """The context of these sections within the budget. `disputed_ids`: which of the sections'
    memories an open review-queue item names, when the caller found that out already (every
    one of them, asked of all their candidates); asked here otherwise."""
    _mark_disputed(sections, disputed_ids)
    available = max_tokens - count_tokens(f"# {title}")
    _allot(sections, available)
    markdown = _render(title, sections)
    total = _markdown_tokens(title, sections, markdown)
    while total > max_tokens:  # a safety net: line counts add up, so this should never run
        section = next(s for s in reversed(sections) if s.rows)
        section.rows.pop()
        markdown = _render(title, sections)
        total = _markdown_tokens(title, sections, markdown)
    return Context(
        topic=topic, max_tokens=max_tokens, tokens=total, sections=sections, markdown=markdown
    )
