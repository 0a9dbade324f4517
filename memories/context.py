"""build_context() and briefing(): what an agent should know before it starts, within a budget.

Three sections, each with a share of the token budget:

1. the memories relevant to the topic (recall: hits the full-text leg matched, or at cosine 0.3
   or more), or, for a briefing without a topic, the most important ones: kind weight x age
   decay x a recall-frequency factor;
2. decisions and conventions from the last two weeks, newest first;
3. open loops: tasks and open questions, oldest first (the longest-waiting first).

Tokens are counted with the embedding model's own WordPiece tokenizer (bundled, offline). Every
line of the markdown is a whole number of tokens and lines are joined by whitespace, which that
tokenizer never turns into a token, so the markdown's count is the sum of its lines' counts; the
final markdown is still counted once more, and the budget is never exceeded. A row that does not
fit whole is cut at a token boundary and marked truncated. Budget a section leaves unused goes
to the next one, and what is left at the end goes back to the sections that had more to show.
A memory shows up once, in the first section that has it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from django.db import connection
from django.utils.translation import gettext as _

from memories import embeddings
from memories.activity import elapsed_ms, log_activity, log_failure
from memories.models import ActivityOperation
from memories.search import ScopeSelection, search, select_scopes, validate_query
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ValidationFailed

MIN_TOKENS = 100
MAX_TOKENS = 32_000
DEFAULT_TOKENS = 2_000
RECENT_DAYS = 14
RECENT_KINDS = ("decision", "convention")
OPEN_LOOP_KINDS = ("task", "open_question")
SHARES = {"focus": 0.5, "recent": 0.25, "open_loops": 0.25}
# A cut row shorter than this says too little to be worth its id and kind.
MIN_TRUNCATED_CONTENT_TOKENS = 8
ELLIPSIS = "…"
# The vector leg ranks every memory, however far; in a small store the tail is noise that would
# crowd out the other sections. A hit the full-text leg did not match needs this cosine.
MIN_RELEVANT_SIMILARITY = 0.3
# Briefing: a memory recalled n times weighs 1 + RECALL_FACTOR * ln(1 + n) times more, so use
# counts without letting a few hot memories drown everything else.
RECALL_FACTOR = 0.25


@cache
def _tokenizer():
    """The embedding model's tokenizer, without its truncation to the model's window."""
    from tokenizers import Tokenizer

    tokenizer_file = Path(embeddings.model_name()) / "tokenizer.json"
    if tokenizer_file.exists():  # no need to load torch just to count
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    else:
        tokenizer = Tokenizer.from_str(embeddings.get_model().tokenizer.backend_tokenizer.to_str())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def _cut(text: str, tokens: int) -> str:
    """The longest prefix of `text` that ends at the end of its first `tokens` tokens."""
    offsets = _tokenizer().encode(text, add_special_tokens=False).offsets
    if tokens <= 0 or not offsets:
        return ""
    return text[: offsets[min(tokens, len(offsets)) - 1][1]]


def validate_max_tokens(max_tokens: object) -> int:
    if (
        isinstance(max_tokens, bool)
        or not isinstance(max_tokens, int)
        or not MIN_TOKENS <= max_tokens <= MAX_TOKENS
    ):
        raise ValidationFailed(
            "max_tokens",
            _("Must be an integer from %(lo)d to %(hi)d.") % {"lo": MIN_TOKENS, "hi": MAX_TOKENS},
        )
    return max_tokens


@dataclass(frozen=True)
class Candidate:
    pk: int
    id: str
    kind: str
    scope: str
    content: str
    age_days: float
    score: float | None = None


@dataclass
class Row:
    candidate: Candidate
    content: str
    truncated: bool
    line: str
    tokens: int

    def as_dict(self) -> dict[str, Any]:
        candidate = self.candidate
        return {
            "id": candidate.id,
            "kind": candidate.kind,
            "scope": candidate.scope,
            "content": self.content,
            "truncated": self.truncated,
            "tokens": self.tokens,
            "score": candidate.score,
            "age_days": round(candidate.age_days, 2),
        }


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
    def tokens(self) -> int:
        if not self.rows:
            return 0
        return count_tokens(self.heading) + sum(row.tokens for row in self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "budget": self.budget,
            "tokens": self.tokens,
            "rows": [row.as_dict() for row in self.rows],
        }


@dataclass
class Context:
    topic: str | None
    max_tokens: int
    tokens: int
    sections: list[Section]
    markdown: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "max_tokens": self.max_tokens,
            "tokens": self.tokens,
            "sections": [section.as_dict() for section in self.sections],
            "markdown": self.markdown,
        }

    def result_ids(self) -> list[dict[str, Any]]:
        return [
            {"id": row.candidate.id, "score": row.candidate.score, "section": section.name}
            for section in self.sections
            for row in section.rows
        ]


def _line(candidate: Candidate, content: str) -> str:
    # One line per memory: whitespace inside the content becomes single spaces (the same
    # tokens: the tokenizer drops whitespace), so the markdown list stays a list.
    return f"- [{candidate.kind}] {' '.join(content.split())} ({candidate.id})"


def _whole(candidate: Candidate) -> Row:
    line = _line(candidate, candidate.content)
    return Row(candidate, candidate.content, False, line, count_tokens(line))


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
            row = section.rows.pop()  # give its tokens back and try it whole, or cut longer
            shown.discard(row.candidate.id)
            left += row.tokens + (0 if section.rows else count_tokens(section.heading))
        left -= _fill(section, left, shown)
        section.budget = max(section.budget, section.tokens)


def _render(title: str, sections: list[Section]) -> str:
    parts = [f"# {title}"]
    for section in sections:
        if section.rows:
            parts.append("")
            parts.append(section.heading)
            parts.extend(row.line for row in section.rows)
    return "\n".join(parts) + "\n"


def _assemble(
    *, title: str, topic: str | None, max_tokens: int, sections: list[Section]
) -> Context:
    available = max_tokens - count_tokens(f"# {title}")
    _allot(sections, available)
    markdown = _render(title, sections)
    total = count_tokens(markdown)
    while total > max_tokens:  # a safety net: line counts add up, so this should never run
        section = next(s for s in reversed(sections) if s.rows)
        section.rows.pop()
        markdown = _render(title, sections)
        total = count_tokens(markdown)
    return Context(
        topic=topic, max_tokens=max_tokens, tokens=total, sections=sections, markdown=markdown
    )


_LOOPS = """
WITH readable AS MATERIALIZED (
    SELECT coalesce(array_agg(id), '{{}}'::bigint[]) AS ids FROM ({scopes}) s
)
(SELECT 'recent', m.id, m.public_id, m.kind_id, s.public_id, m.content,
        extract(epoch FROM now() - m.created_at)::float8 / 86400 AS age_days
 FROM memories_memory m JOIN scopes_scope s ON s.id = m.scope_id
 WHERE m.valid AND m.scope_id = ANY((SELECT ids FROM readable)::bigint[])
   AND m.kind_id = ANY(%s::text[]) AND m.created_at >= now() - make_interval(days => %s)
 ORDER BY m.created_at DESC, m.id DESC
 LIMIT %s)
UNION ALL
(SELECT 'open_loops', m.id, m.public_id, m.kind_id, s.public_id, m.content,
        extract(epoch FROM now() - m.created_at)::float8 / 86400 AS age_days
 FROM memories_memory m JOIN scopes_scope s ON s.id = m.scope_id
 WHERE m.valid AND m.scope_id = ANY((SELECT ids FROM readable)::bigint[])
   AND m.kind_id = ANY(%s::text[])
 ORDER BY m.created_at ASC, m.id ASC
 LIMIT %s)
"""

_IMPORTANT = """
WITH readable AS MATERIALIZED (
    SELECT coalesce(array_agg(id), '{{}}'::bigint[]) AS ids FROM ({scopes}) s
)
SELECT m.id, m.public_id, m.kind_id, s.public_id, m.content, a.age_days,
       k.weight * power(0.5, a.age_days / greatest(k.half_life_days, 1))
       * (1 + %s * ln(1 + m.recall_count)) AS score
FROM memories_memory m
JOIN memories_memorykind k ON k.slug = m.kind_id
JOIN scopes_scope s ON s.id = m.scope_id
CROSS JOIN LATERAL (
    SELECT greatest(extract(epoch FROM now() - m.created_at)::float8 / 86400, 0) AS age_days
) a
WHERE m.valid AND m.scope_id = ANY((SELECT ids FROM readable)::bigint[])
ORDER BY score DESC, m.id DESC
LIMIT %s
"""


def _candidate_limit(budget: int, *, per_row: int, lo: int, hi: int) -> int:
    """How many candidates a section fetches: enough to fill its share with short rows."""
    return max(lo, min(hi, math.ceil(budget / per_row)))


def _loops(selection: ScopeSelection, limit: int) -> dict[str, list[Candidate]]:
    sql = _LOOPS.format(scopes=selection.sql)
    params = [
        *selection.params,
        list(RECENT_KINDS),
        RECENT_DAYS,
        limit,
        list(OPEN_LOOP_KINDS),
        limit,
    ]
    found: dict[str, list[Candidate]] = {"recent": [], "open_loops": []}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for section, pk, public_id, kind, scope, content, age_days in cursor.fetchall():
            found[section].append(
                Candidate(pk, public_id, kind, scope, content, max(float(age_days), 0.0))
            )
    return found


def _important(selection: ScopeSelection, limit: int) -> list[Candidate]:
    sql = _IMPORTANT.format(scopes=selection.sql)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*selection.params, RECALL_FACTOR, limit])
        return [
            Candidate(pk, public_id, kind, scope, content, float(age_days), float(score))
            for pk, public_id, kind, scope, content, age_days, score in cursor.fetchall()
        ]


def _sections(first: Section, selection: ScopeSelection, max_tokens: int) -> list[Section]:
    limit = _candidate_limit(max_tokens * SHARES["recent"], per_row=15, lo=5, hi=200)
    loops = _loops(selection, limit)
    return [
        first,
        Section(
            "recent",
            _("Recent decisions and conventions (last %(n)d days)") % {"n": RECENT_DAYS},
            SHARES["recent"],
            loops["recent"],
        ),
        Section(
            "open_loops",
            _("Open loops (oldest first)"),
            SHARES["open_loops"],
            loops["open_loops"],
        ),
    ]


def build_context(
    *,
    actor: Actor,
    topic: str,
    max_tokens: int = DEFAULT_TOKENS,
    scopes: Sequence[str] | None = None,
) -> Context:
    """Context for an agent about to work on `topic`, in at most `max_tokens` tokens."""
    started = time.perf_counter()
    options = {"max_tokens": max_tokens}
    try:
        validate_query(topic, field_name="topic")
        max_tokens = validate_max_tokens(max_tokens)
        selection = select_scopes(actor=actor, scopes=scopes)
        k = _candidate_limit(max_tokens * SHARES["focus"], per_row=50, lo=5, hi=50)
        hits = search(query=topic, selection=selection, k=k)
        focus = Section(
            "relevant",
            _("Relevant to the topic"),
            SHARES["focus"],
            [
                Candidate(hit.pk, hit.id, hit.kind, hit.scope, hit.content, hit.age_days, hit.score)
                for hit in hits
                if hit.fts_matched or (hit.similarity or 0.0) >= MIN_RELEVANT_SIMILARITY
            ],
        )
        context = _assemble(
            title=_("Context"),
            topic=topic,
            max_tokens=max_tokens,
            sections=_sections(focus, selection, max_tokens),
        )
    except Exception as exc:
        log_failure(
            actor=actor,
            operation=ActivityOperation.BUILD_CONTEXT,
            error=exc,
            started=started,
            query=topic,
            scopes=scopes or [],
            options=options,
        )
        raise
    results = context.result_ids()
    log_activity(
        actor=actor,
        operation=ActivityOperation.BUILD_CONTEXT,
        query=topic,
        scopes=selection.requested,
        options=options,
        results=results,
        latency_ms=elapsed_ms(started),
        # Only the rows found for the topic count as recalled.
        recalled_ids=[row.candidate.pk for row in context.sections[0].rows],
    )
    return context


def briefing(
    *, actor: Actor, max_tokens: int = DEFAULT_TOKENS, scopes: Sequence[str] | None = None
) -> Context:
    """A session-start briefing: build_context without a topic.

    Its rows do not bump recall counts: the briefing ranks by them, and counting its own
    answers would keep the same memories on top forever.
    """
    started = time.perf_counter()
    options = {"max_tokens": max_tokens}
    try:
        max_tokens = validate_max_tokens(max_tokens)
        selection = select_scopes(actor=actor, scopes=scopes)
        limit = _candidate_limit(max_tokens * SHARES["focus"], per_row=25, lo=10, hi=400)
        focus = Section(
            "important",
            _("Most important"),
            SHARES["focus"],
            _important(selection, limit),
        )
        context = _assemble(
            title=_("Session briefing"),
            topic=None,
            max_tokens=max_tokens,
            sections=_sections(focus, selection, max_tokens),
        )
    except Exception as exc:
        log_failure(
            actor=actor,
            operation=ActivityOperation.BRIEFING,
            error=exc,
            started=started,
            scopes=scopes or [],
            options=options,
        )
        raise
    log_activity(
        actor=actor,
        operation=ActivityOperation.BRIEFING,
        scopes=selection.requested,
        options=options,
        results=context.result_ids(),
        latency_ms=elapsed_ms(started),
    )
    return context
