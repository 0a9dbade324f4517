"""The sections of context and briefings besides the topic's: recent decisions and conventions,
open loops, and (for a briefing) the most important memories."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import connections, router
from django.utils.translation import gettext as _

from memories.approved_rules import approved_rule_lines
from memories.kinds import kind_slugs
from memories.models import Memory
from memories.recall.budget import (
    OPEN_LOOP_KINDS,
    RECALL_FACTOR,
    RECENT_DAYS,
    RECENT_KINDS,
    RULES_SECTION,
    RULES_SHARE,
    SHARES,
    Candidate,
    Section,
)
from memories.recall.inputs import ScopeSelection
from memories.recall.statement import (
    AGE_DAYS,
    AGE_DAYS_AT,
    AT_VERSION,
    DECAY,
    MAX_HALF_LIVES,
    STALE,
    VALID_AT,
)
from zeromemory.core import prepared

# {valid}, {content} and {now}: the memory's state, text and the instant, now or `as_of`'s.
# The recent decisions are bounded by their days (`memory_kind_recent`'s range). The open loops
# have no time bound: they are read per scope and kind, the first `limit` of each pair in the
# index's order, and merged; the first `limit` by (created_at, id) of the merged lists are those
# of the whole set. Sorting every open loop of the scopes grew with them. Each kind is its own
# branch with the kind written in (`{open_loops}`): joined to a list of kinds, the kind was
# unknown when the statement was planned, so the planner took it to match as many rows as the
# scopes' commonest kind and read them in date order until `limit` matched, which for a team
# with few open loops was every memory of the scopes (6 ms at 2,000 memories in four scopes,
# against 0.14 reading each kind's own rows).
_LOOPS = """
(SELECT 'recent', m.id, m.public_id, m.kind_id, s.public_id, {content}, {age} AS age_days,
        {stale}
 FROM memories_memory m JOIN scopes_scope s ON s.id = m.scope_id
 JOIN memories_memorykind k ON k.slug = m.kind_id
 WHERE {valid} AND m.scope_id = ANY({scopes})
   AND m.kind_id = ANY(%(recent_kinds)s::text[])
   AND m.created_at >= {now} - make_interval(days => %(recent_days)s)
 ORDER BY m.created_at DESC, m.id DESC
 LIMIT %(limit)s)
UNION ALL
(SELECT 'open_loops', m.id, m.public_id, m.kind_id, s.public_id, {content}, {age} AS age_days,
        {stale}
 FROM unnest({scopes}) AS sel(scope_id) CROSS JOIN LATERAL ({open_loops}) m
 JOIN scopes_scope s ON s.id = m.scope_id
 JOIN memories_memorykind k ON k.slug = m.kind_id
 ORDER BY m.created_at ASC, m.id ASC
 LIMIT %(limit)s)
"""

_OPEN_LOOPS_OF_KIND = """(
    SELECT m.* FROM memories_memory m
    WHERE {valid} AND m.scope_id = sel.scope_id AND m.kind_id = {kind}
    ORDER BY m.created_at ASC, m.id ASC
    LIMIT %(limit)s
)"""


def _written_in(slug: str) -> str | None:
    """A kind's slug as a literal of a statement, or None for one that is not a slug (letters,
    digits, - and _): the kinds written in are the catalogue's, never a caller's text."""
    return f"'{slug}'" if slug and slug.replace("-", "").replace("_", "").isalnum() else None


def _open_loops(valid: str) -> str:
    """The open-loop kinds' branches (`OPEN_LOOP_KINDS`), each kind written in."""
    return " UNION ALL ".join(
        _OPEN_LOOPS_OF_KIND.format(valid=valid, kind=_written_in(kind)) for kind in OPEN_LOOP_KINDS
    )


_IMPORTANT = """
SELECT m.id, m.public_id, m.kind_id, s.public_id, {content}, a.age_days,
       {score} AS score, {stale}
FROM memories_memory m
JOIN memories_memorykind k ON k.slug = m.kind_id
JOIN scopes_scope s ON s.id = m.scope_id
CROSS JOIN LATERAL (SELECT {age} AS age_days) a
WHERE {valid} AND m.scope_id = ANY({scopes}){candidates}
ORDER BY score DESC, m.id DESC
LIMIT %(limit)s
"""
# The memories that can be among the first `limit` now, read through indexes rather than by
# ranking every valid row of the scopes (which grew with them). A memory's score is its kind's
# weight × its age decay × its recall boost. Within a kind, a memory never recalled ranks by its
# age alone: newer first, then the larger id where the decay ties (rows dated in the future all
# count as age 0; rows past MAX_HALF_LIVES half-lives all decay alike). So a never-recalled
# memory that is not among the first `limit` of its kind in the scopes, in that order, has
# `limit` rows of its kind at or above it and cannot be in the answer; only a recalled one can
# climb past them. The candidates, per kind: the first `limit` dated from now on by id, the first
# `limit` up to now by date (`memory_kind_recent`), the first `limit` past the decay's bound by
# id (empty with the catalogue's half-lives, so its index range is empty); plus every valid
# recalled memory of the scopes (`memory_recalled`: as many as were ever recalled, not written).
# The bound's instant is taken a day later than exact, capped where 100 half-lives would pass
# PostgreSQL's earliest instant: a wider range only adds newer rows, which the by-date list
# already holds whenever the bound's ties matter.
_CANDIDATES = """
 AND m.id IN (
    SELECT m.id FROM (
        SELECT c.* FROM ({of_kinds}) c
        UNION
        SELECT {columns} FROM memories_memory m
        WHERE m.valid AND m.recall_count > 0 AND m.scope_id = ANY({scopes})
    ) m
    JOIN memories_memorykind k ON k.slug = m.kind_id
    CROSS JOIN LATERAL (SELECT {age} AS age_days) a
    ORDER BY {score} DESC, m.id DESC
    LIMIT %(limit)s
 )"""
# The three lists of one kind: `{kind}` is the kind's slug written in, so the planner reads the
# kind's own rows (a kind the scopes hold none of costs an index probe); joined to the catalogue
# as a column, the kind was unknown when the statement was planned, and for each kind the
# planner read the scopes' memories in date and in id order until `limit` matched (31 ms of a
# briefing at 2,000 memories, most of them of one kind). A kind added to the catalogue since
# this process read it (`memories.kinds`, within a minute) is still read, the old way.
_KIND_CANDIDATES = """
SELECT c.* FROM memories_memorykind kc CROSS JOIN LATERAL (
    (SELECT m.* FROM unnest({scopes}) sel(scope_id) CROSS JOIN LATERAL (
        SELECT {columns} FROM memories_memory m
        WHERE m.valid AND m.kind_id = {kind} AND m.scope_id = sel.scope_id
          AND m.created_at >= now()
        ORDER BY m.id DESC LIMIT %(limit)s) m
     ORDER BY m.id DESC LIMIT %(limit)s)
    UNION ALL
    (SELECT m.* FROM unnest({scopes}) sel(scope_id) CROSS JOIN LATERAL (
        SELECT {columns} FROM memories_memory m
        WHERE m.valid AND m.kind_id = {kind} AND m.scope_id = sel.scope_id
          AND m.created_at <= now()
        ORDER BY m.created_at DESC, m.id DESC LIMIT %(limit)s) m
     ORDER BY m.created_at DESC, m.id DESC LIMIT %(limit)s)
    UNION ALL
    (SELECT m.* FROM unnest({scopes}) sel(scope_id) CROSS JOIN LATERAL (
        SELECT {columns} FROM memories_memory m
        WHERE m.valid AND m.kind_id = {kind} AND m.scope_id = sel.scope_id
          AND m.created_at < now() + interval '1 day' - make_interval(
              days => least(
                  {half_lives}::bigint * greatest(kc.half_life_days, 1), 2400000
              )::int)
        ORDER BY m.id DESC LIMIT %(limit)s) m
     ORDER BY m.id DESC LIMIT %(limit)s)
) c
WHERE {which}"""


def _of_kinds(*, scopes: str, columns: str, half_lives: int) -> str:
    """`_KIND_CANDIDATES` for each kind of the catalogue as this process knows it, then for the
    kinds it does not know yet. The slugs are the catalogue's (letters, digits, - and _)."""
    known = [literal for literal in map(_written_in, kind_slugs()) if literal is not None]
    parts = [
        _KIND_CANDIDATES.format(
            scopes=scopes,
            columns=columns,
            half_lives=half_lives,
            kind=literal,
            which=f"kc.slug = {literal}",
        )
        for literal in known
    ]
    others = "ARRAY[" + ",".join(known or ["''"]) + "]::text[]"
    parts.append(
        _KIND_CANDIDATES.format(
            scopes=scopes,
            columns=columns,
            half_lives=half_lives,
            kind="kc.slug",
            which=f"kc.slug <> ALL({others})",
        )
    )
    return "\n UNION ALL \n".join(f"({part})" for part in parts)


# What the candidates carry: the columns of the score, so that only the first `limit` of them
# are read again whole.
_CANDIDATE_COLUMNS = "m.id, m.kind_id, m.created_at, m.recall_count"
_SCORE = "{decay} * (1 + %(factor)s * ln(1 + m.recall_count))"


def _at(as_of: datetime | None) -> dict[str, str]:
    """The fragments for now, or for the instant `as_of` (a validated datetime, written into
    the statement as a literal: it is ours, never the caller's text)."""
    if as_of is None:
        return {"valid": "m.valid", "content": "m.content", "now": "now()", "age": AGE_DAYS}
    at = f"'{as_of.isoformat()}'::timestamptz"
    return {
        "valid": VALID_AT.format(at=at, id="id"),
        "content": AT_VERSION.format(column="content", at=at),
        "now": at,
        "age": AGE_DAYS_AT.format(at=at),
    }


def candidate_limit(budget: int, *, per_row: int, lo: int, hi: int) -> int:
    """How many candidates a section fetches: enough to fill its share with short rows."""
    return max(lo, min(hi, math.ceil(budget / per_row)))


def loop_rows(
    selection: ScopeSelection, limit: int, as_of: datetime | None = None
) -> dict[str, list[Candidate]]:
    fragments = _at(as_of)
    sql = _LOOPS.format(
        scopes=selection.array,
        stale=STALE,
        open_loops=_open_loops(fragments["valid"]),
        **fragments,
    )
    params = {"recent_kinds": list(RECENT_KINDS), "recent_days": RECENT_DAYS, "limit": limit}
    found: dict[str, list[Candidate]] = {"recent": [], "open_loops": []}
    with connections[router.db_for_read(Memory)].cursor() as cursor:
        cursor.execute(sql, params)
        for section, pk, public_id, kind, scope, content, age_days, stale in cursor.fetchall():
            found[section].append(
                Candidate(
                    pk, public_id, kind, scope, content, max(float(age_days), 0.0), stale=stale
                )
            )
    return found


def important_rows(
    selection: ScopeSelection, limit: int, as_of: datetime | None = None
) -> list[Candidate]:
    fragments = _at(as_of)
    del fragments["now"]
    # At an instant in the past every row is ranked (validity and text are the instant's).
    score = _SCORE.format(decay=DECAY.format(age="a.age_days"))
    candidates = "" if as_of is not None else _CANDIDATES
    sql = _IMPORTANT.format(
        scopes=selection.array,
        score=score,
        stale=STALE,
        candidates=candidates.format(
            scopes=selection.array,
            columns=_CANDIDATE_COLUMNS,
            age=fragments["age"],
            score=score,
            of_kinds=_of_kinds(
                scopes=selection.array, columns=_CANDIDATE_COLUMNS, half_lives=MAX_HALF_LIVES
            ),
        )
        if candidates
        else "",
        **fragments,
    )
    # The limit and the factor are ours, written in: the statement has no values, and its
    # connection plans it once for these scopes and this limit (`zeromemory.core.prepared`).
    # Planning it (the kinds' branches) took longer than running it. An instant in the past
    # is written in too, and each would be a statement of its own: that one is sent as it is.
    sql = sql % {"factor": float(RECALL_FACTOR), "limit": int(limit)}
    with connections[router.db_for_read(Memory)].cursor() as cursor:
        if as_of is None:
            prepared.execute(cursor, sql, [], generic=True)
        else:
            cursor.execute(sql)
        return [
            Candidate(pk, public_id, kind, scope, content, float(age_days), float(score), stale=st)
            for pk, public_id, kind, scope, content, age_days, score, st in cursor.fetchall()
        ]


def rules_section(selection: ScopeSelection) -> list[Section]:
    """The approved rules of the scopes, first in every context and briefing (none: no section).
    A rule row carries its memory's id, so mark_used can name it."""
    rules = [
        Candidate(rule.memory_pk, rule.memory_id, "rule", rule.scope_id, rule.text, 0.0)
        for rule in approved_rule_lines(selection.ids)
    ]
    if not rules:
        return []
    return [Section(RULES_SECTION, _("Team rules"), RULES_SHARE, rules)]


@dataclass(frozen=True)
class OtherSections:
    """The sections around a context's or briefing's first one: the rules before it, the recent
    decisions and open loops after it. They need neither the query's vector nor the first
    section's rows, so build_context reads them while the model embeds its topic."""

    rules: list[Section]
    recent: Section
    open_loops: Section

    def around(self, first: Section) -> list[Section]:
        return [*self.rules, first, self.recent, self.open_loops]


def other_sections(
    selection: ScopeSelection, max_tokens: int, as_of: datetime | None = None
) -> OtherSections:
    limit = candidate_limit(max_tokens * SHARES["recent"], per_row=15, lo=5, hi=200)
    loops = loop_rows(selection, limit, as_of)
    return OtherSections(
        rules=rules_section(selection),
        recent=Section(
            "recent",
            _("Recent decisions and conventions (last %(n)d days)") % {"n": RECENT_DAYS},
            SHARES["recent"],
            loops["recent"],
        ),
        open_loops=Section(
            "open_loops",
            _("Open loops (oldest first)"),
            SHARES["open_loops"],
            loops["open_loops"],
        ),
    )


def sections_after(
    first: Section, selection: ScopeSelection, max_tokens: int, as_of: datetime | None = None
) -> list[Section]:
    return other_sections(selection, max_tokens, as_of).around(first)
