"""recall(): hybrid search over the memories an actor may read, in one SQL statement.

Two legs, each keeping its best 4·k candidates among valid memories in the readable scopes:

- vector: cosine distance over the memory embeddings and over the window embeddings of long
  memories (HNSW), collapsed to the best distance per memory, so text near the end of a long
  memory is found through its window;
- full text: `websearch_to_tsquery('english', query)` against the stored tsvector. When all terms
  together match nothing, any term may match, and rows that match more terms rank first.

The legs are fused by reciprocal rank fusion, 1 / (60 + rank) per leg, then multiplied by the
kind's weight and an age decay 0.5^(age / half-life), both from the MemoryKind catalogue.

A row the fallback found matches only part of the query, so its full-text share is scaled by its
coverage: the summed rarity (idf, counted among the readable rows that match any term) of the
terms it matches over that of all the query's terms. Without it, a paraphrase that happens to
share one common word with many memories lets them all jump over the memory the vector leg put
first; with it, a rare identifier that matches still lifts its memory. Rows that match the whole
query have coverage 1. Only readable rows are counted, so memories in other scopes never change
a rank.

The query is embedded and matched exactly as it arrived: no trimming, normalising or translating,
and no LLM call. The scopes come from `scopes.access`; the SQL only ever sees their ids.

HNSW and filters: an HNSW scan returns its `ef_search` nearest rows and stops, so a scope or kind
filter applied afterwards could leave fewer than 4·k. pgvector's iterative scan keeps walking the
graph until the LIMIT is met (bounded by `hnsw.max_scan_tuples`). `relaxed_order` is the cheap
mode; the legs re-sort their candidates by distance anyway. The settings are `SET LOCAL` in the
same simple-protocol message as the query: PostgreSQL runs a multi-statement message as one
implicit transaction, so they cost no extra round trip and never leak into the pooled connection
(inside a caller's transaction they last until its end). JIT is off for the statement: its plan
cost can cross `jit_above_cost`, and compiling would take longer than the whole search.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.utils.translation import gettext as _

from memories import embeddings
from memories.activity import elapsed_ms, log_activity, log_failure
from memories.kinds import kind_for_slug
from memories.models import ActivityOperation
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed

MAX_K = 50
DEFAULT_K = 10
CANDIDATES_PER_RESULT = 4  # each leg keeps its best 4·k
RRF_K = 60
MAX_QUERY_CHARS = 4000
MAX_SCOPES = 50
# The HNSW candidate list. pgvector's default of 40 found 6 of the true 10 nearest at 100,000
# memories of the bench (clustered, template-like texts); 200 finds about 9 for ~3 ms more.
MIN_EF_SEARCH = 200
# The full-text leg ranks at most this many rows matching the whole query (a very common word
# matches tens of thousands), and the fallback looks at most at this many rows per term: rare
# terms are seen whole, common ones (which say little) only in part. This bounds both.
FULLTEXT_SCAN_LIMIT = 1000
FALLBACK_TERM_LIMIT = 100

MODES = ("hybrid", "vector", "fulltext")


@dataclass(frozen=True)
class Hit:
    id: str
    content: str
    kind: str
    scope: str
    score: float
    similarity: float | None
    fts_matched: bool
    age_days: float
    has_original: bool
    pk: int = field(repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "kind": self.kind,
            "scope": self.scope,
            "score": self.score,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "fts_matched": self.fts_matched,
            "age_days": round(self.age_days, 2),
            "has_original": self.has_original,
        }


@dataclass(frozen=True)
class ScopeSelection:
    """The scopes a read covers: SQL yielding their ids, and what the caller asked for."""

    sql: str
    params: tuple[Any, ...]
    requested: list[str]


_NO_SCOPES = "SELECT NULL::bigint AS id WHERE false"


def select_scopes(*, actor: Actor, scopes: Sequence[str] | None) -> ScopeSelection:
    """Readable scopes, or the requested ones; a scope the actor cannot read answers 404.

    Without a request the readable-scopes query itself is embedded in the search statement, so
    the search stays one round trip.
    """
    if scopes is not None and (
        not isinstance(scopes, list | tuple) or not all(isinstance(s, str) for s in scopes)
    ):
        raise ValidationFailed("scopes", _("Must be a list of scope ids."))
    if not scopes:
        readable = access.readable_scopes(actor).values("id")
        try:
            sql, params = readable.query.sql_with_params()
        except EmptyResultSet:
            sql, params = _NO_SCOPES, ()
        return ScopeSelection(sql=sql, params=tuple(params), requested=[])
    requested = list(dict.fromkeys(scopes))
    if len(requested) > MAX_SCOPES:
        raise ValidationFailed("scopes", _("At most %(n)d scopes.") % {"n": MAX_SCOPES})
    found = dict(
        access.readable_scopes(actor).filter(public_id__in=requested).values_list("public_id", "id")
    )
    for public_id in requested:
        if public_id not in found:
            try:
                access.readable_scope(actor, public_id)  # the access module's own 404
            except NotFound as exc:
                raise exc.naming("scopes") from None
    ids = [found[public_id] for public_id in requested]
    return ScopeSelection(
        sql="SELECT unnest(%s::bigint[]) AS id", params=(ids,), requested=requested
    )


def validate_query(query: object, *, field_name: str = "query") -> str:
    """Refuse what cannot be searched; return the query unchanged otherwise."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationFailed(field_name, _("The query is empty."))
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationFailed(
            field_name, _("The query is longer than %(n)d characters.") % {"n": MAX_QUERY_CHARS}
        )
    if "\x00" in query:
        raise ValidationFailed(field_name, _("NUL characters are not allowed."))
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationFailed(field_name, _("The query is not valid UTF-8 text.")) from None
    return query


def validate_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    if kinds is None:
        return None
    if not isinstance(kinds, list | tuple):
        raise ValidationFailed("kinds", _("Must be a list of kinds."))
    return [kind_for_slug(kind, field="kinds").slug for kind in dict.fromkeys(kinds)] or None


def validate_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ValidationFailed("k", _("Must be an integer from 1 to %(n)d.") % {"n": MAX_K})
    return k


def _vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


# Placeholders in braces are SQL fragments chosen by mode and filters, never caller text.
_FILTER = "m.valid AND m.scope_id = ANY((SELECT ids FROM readable)::bigint[]){kinds}"

_VECTOR_LEG = """
vec_memory AS MATERIALIZED (
    SELECT m.id, m.embedding <=> (SELECT qv FROM input) AS distance
    FROM memories_memory m
    WHERE m.embedding IS NOT NULL AND {filter}
    ORDER BY m.embedding <=> (SELECT qv FROM input)
    LIMIT (SELECT n FROM input)
),
vec_window AS MATERIALIZED (
    SELECT w.memory_id AS id, w.embedding <=> (SELECT qv FROM input) AS distance
    FROM memories_memorywindow w JOIN memories_memory m ON m.id = w.memory_id
    WHERE {filter}
    ORDER BY w.embedding <=> (SELECT qv FROM input)
    LIMIT (SELECT n FROM input)
),
vec AS (
    SELECT id, min(distance) AS distance,
           row_number() OVER (ORDER BY min(distance), id) AS rank
    FROM (SELECT id, distance FROM vec_memory UNION ALL SELECT id, distance FROM vec_window) u
    GROUP BY id
    ORDER BY rank
    LIMIT (SELECT n FROM input)
),"""

_NO_VECTOR_LEG = """
vec AS (SELECT NULL::bigint AS id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false),"""

# fts_strict: rows matching the whole query (at most FULLTEXT_SCAN_LIMIT of them are ranked).
# Only when there are none: the fallback. Its terms are the query's own positive lexemes, read
# back from the tsquery so the websearch syntax (quotes, "or", -negation) decides what a term is;
# negated terms stay out. fts_term_rows takes up to FALLBACK_TERM_LIMIT rows per term; each of
# them is checked against every term (terms = how many it matches) and weighed by coverage.
_FULLTEXT_LEG = """
fts_strict AS MATERIALIZED (
    SELECT m.id, m.search_vector
    FROM memories_memory m CROSS JOIN input i
    WHERE m.search_vector @@ i.tsq AND {filter}
    LIMIT {scan_limit}
),
fts_all AS MATERIALIZED (
    SELECT s.id, ts_rank_cd(s.search_vector, i.tsq) AS weight
    FROM fts_strict s CROSS JOIN input i
    ORDER BY weight DESC, s.id DESC
    LIMIT (SELECT n FROM input)
),
any_term AS MATERIALIZED (
    SELECT array_agg(term) AS terms, string_agg(term::text, ' | ')::tsquery AS tsq
    FROM (
        SELECT DISTINCT ('''' || found[2] || '''')::tsquery AS term
        FROM regexp_matches(
            (SELECT tsq::text FROM input), '(!?)''((?:[^'']|'''')+)''', 'g'
        ) AS found
        WHERE found[1] = ''
    ) t
),
fts_term_rows AS MATERIALIZED (
    SELECT t.term::text AS term, r.id
    FROM any_term a CROSS JOIN unnest(a.terms) AS t(term)
    CROSS JOIN LATERAL (
        SELECT m.id FROM memories_memory m
        WHERE m.search_vector @@ t.term AND {filter}
        LIMIT {term_limit}
    ) r
    WHERE NOT EXISTS (SELECT 1 FROM fts_strict)
),
fts_partial AS MATERIALIZED (
    SELECT m.id, ts_rank_cd(m.search_vector, a.tsq) AS weight,
           ARRAY(
               SELECT term::text FROM unnest(a.terms) AS term WHERE m.search_vector @@ term
           ) AS matched
    FROM (SELECT DISTINCT id FROM fts_term_rows) c
    JOIN memories_memory m ON m.id = c.id
    CROSS JOIN any_term a
),
term_weight AS MATERIALIZED (
    SELECT t.term,
           ln(1 + ((SELECT count(*) FROM fts_partial) + 1.0) / (count(r.id) + 0.5)) AS idf
    FROM (SELECT term::text AS term FROM any_term, unnest(any_term.terms) AS term) t
    LEFT JOIN fts_term_rows r ON r.term = t.term
    GROUP BY t.term
),
fts_any AS MATERIALIZED (
    SELECT p.id, p.weight, cardinality(p.matched) AS terms,
           (SELECT sum(idf) FROM term_weight WHERE term = ANY(p.matched))
           / (SELECT sum(idf) FROM term_weight) AS coverage
    FROM fts_partial p
    ORDER BY terms DESC, coverage DESC, weight DESC, p.id DESC
    LIMIT (SELECT n FROM input)
),
fts AS (
    SELECT id, coverage,
           row_number() OVER (ORDER BY terms DESC, coverage DESC, weight DESC, id DESC) AS rank
    FROM (
        SELECT id, weight, 1 AS terms, 1.0::float8 AS coverage FROM fts_all
        UNION ALL
        SELECT id, weight, terms, coverage::float8 FROM fts_any
    ) u
),"""

_NO_FULLTEXT_LEG = """
fts AS (SELECT NULL::bigint AS id, NULL::float8 AS coverage, NULL::bigint AS rank WHERE false),"""

_SEARCH = """
SET LOCAL hnsw.ef_search = %s;
SET LOCAL hnsw.iterative_scan = relaxed_order;
SET LOCAL jit = off;
WITH input AS MATERIALIZED (
    SELECT %s::vector AS qv, websearch_to_tsquery('english', %s::text) AS tsq,
           %s::int AS n, %s::text[] AS kinds
),
readable AS MATERIALIZED (
    SELECT coalesce(array_agg(id), '{{}}'::bigint[]) AS ids FROM ({scopes}) s
),{vector_leg}{fulltext_leg}
fused AS (
    SELECT coalesce(v.id, f.id) AS id, v.distance, f.id IS NOT NULL AS fts_matched,
           coalesce(1.0::float8 / ({rrf_k} + v.rank), 0)
           + coalesce(f.coverage / ({rrf_k} + f.rank), 0) AS rrf
    FROM vec v FULL JOIN fts f ON f.id = v.id
),
aged AS (
    SELECT f.*, m.kind_id,
           greatest(extract(epoch FROM now() - m.created_at)::float8 / 86400, 0) AS age_days
    FROM fused f JOIN memories_memory m ON m.id = f.id
),
ranked AS (
    SELECT a.*,
           a.rrf * k.weight * power(0.5, a.age_days / greatest(k.half_life_days, 1)) AS score
    FROM aged a JOIN memories_memorykind k ON k.slug = a.kind_id
    ORDER BY score DESC, a.id DESC
    LIMIT %s
)
SELECT r.id, m.public_id, m.content, m.kind_id, s.public_id, r.score,
       1 - coalesce(r.distance, least(
           m.embedding <=> (SELECT qv FROM input),
           (SELECT min(w.embedding <=> (SELECT qv FROM input))
            FROM memories_memorywindow w WHERE w.memory_id = m.id)
       )) AS similarity,
       r.fts_matched, r.age_days, m.content_original <> '' AS has_original
FROM ranked r
JOIN memories_memory m ON m.id = r.id
JOIN scopes_scope s ON s.id = m.scope_id
ORDER BY r.score DESC, r.id DESC
"""


def ef_search_for(candidates: int) -> int:
    return max(MIN_EF_SEARCH, candidates)


def search(
    *,
    query: str,
    selection: ScopeSelection,
    kinds: list[str] | None = None,
    k: int = DEFAULT_K,
    mode: str = "hybrid",
) -> list[Hit]:
    """The hybrid search itself, for callers that validated and will log (recall, context)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    candidates = CANDIDATES_PER_RESULT * k
    vector = embeddings.embed_query(query) if mode != "fulltext" else None
    kinds_sql = " AND m.kind_id = ANY((SELECT kinds FROM input)::text[])" if kinds else ""
    row_filter = _FILTER.format(kinds=kinds_sql)
    sql = _SEARCH.format(
        scopes=selection.sql,
        vector_leg=(_VECTOR_LEG if mode != "fulltext" else _NO_VECTOR_LEG).format(
            filter=row_filter
        ),
        fulltext_leg=(_FULLTEXT_LEG if mode != "vector" else _NO_FULLTEXT_LEG).format(
            filter=row_filter, scan_limit=FULLTEXT_SCAN_LIMIT, term_limit=FALLBACK_TERM_LIMIT
        ),
        rrf_k=RRF_K,
    )
    params = [
        ef_search_for(candidates),
        _vector_literal(vector) if vector is not None else None,
        query,
        candidates,
        kinds,
        *selection.params,
        k,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while cursor.nextset():  # the SETs answer first; the rows are in the last result
            pass
        rows = cursor.fetchall()
    return [
        Hit(
            pk=pk,
            id=public_id,
            content=content,
            kind=kind,
            scope=scope,
            score=float(score),
            similarity=None if similarity is None else float(similarity),
            fts_matched=fts_matched,
            age_days=float(age_days),
            has_original=has_original,
        )
        for (
            pk,
            public_id,
            content,
            kind,
            scope,
            score,
            similarity,
            fts_matched,
            age_days,
            has_original,
        ) in rows
    ]


def recall(
    *,
    actor: Actor,
    query: str,
    scopes: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    k: int = DEFAULT_K,
    mode: str = "hybrid",
) -> list[Hit]:
    """The k best valid memories for the query among the scopes the actor may read.

    `scopes` narrows the search (each must be readable: 404 otherwise); `kinds` filters by
    kind; `mode` picks both legs (the default) or one of them (the bench compares them).
    Every call, refused ones included, writes one activity row.
    """
    started = time.perf_counter()
    options: dict[str, Any] = {
        "k": k if isinstance(k, int) else None,
        "kinds": [str(kind) for kind in kinds]
        if isinstance(kinds, list | tuple) and kinds
        else None,
    }
    if mode != "hybrid":
        options["mode"] = mode
    try:
        validate_query(query)
        k = validate_k(k)
        kind_slugs = validate_kinds(kinds)
        selection = select_scopes(actor=actor, scopes=scopes)
        hits = search(query=query, selection=selection, kinds=kind_slugs, k=k, mode=mode)
    except Exception as exc:
        log_failure(
            actor=actor,
            operation=ActivityOperation.RECALL,
            error=exc,
            started=started,
            query=query,
            scopes=scopes or [],
            options=options,
        )
        raise
    log_activity(
        actor=actor,
        operation=ActivityOperation.RECALL,
        query=query,
        scopes=selection.requested,
        options=options,
        results=[{"id": hit.id, "score": hit.score} for hit in hits],
        latency_ms=elapsed_ms(started),
        recalled_ids=[hit.pk for hit in hits],
    )
    return hits
