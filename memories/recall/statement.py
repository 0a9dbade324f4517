"""The one recall statement, put together from the legs in `sql.py` and a fusion."""

from __future__ import annotations

from memories.recall import usage
from memories.recall.fragments import AGE_DAYS_AT, AT_VERSION, DECAY, STALE, VALID_AT
from memories.recall.sql import (
    BEFORE_SCORING,
    BM25_IDF,
    BM25_SCORING,
    EXACT_PATH,
    EXACT_ROWS,
    FILTER,
    FULLTEXT_LEG,
    FULLTEXT_SCAN_LIMIT,
    INDEX_PATH,
    MIN_DISTANCE_SPREAD,
    NO_FULLTEXT_LEG,
    NO_VECTOR_LEG,
    POOL_IDF,
    ROWS,
    RRF_K,
    TS_RANK_WEIGHT,
    VECTOR_LEG,
    Tuning,
)

SEARCH = """
SET LOCAL hnsw.ef_search = %s;
SET LOCAL hnsw.iterative_scan = relaxed_order;
SET LOCAL jit = off;{path_setting}
WITH input AS MATERIALIZED (
    SELECT %s::vector AS qv, websearch_to_tsquery('english', %s::text) AS tsq,
           %s::text[] AS kinds, %s::timestamptz AS as_of
),{vector_leg}{fulltext_leg}
{fused}
aged AS (
    SELECT f.*, m.kind_id,
           {age} AS age_days
    FROM fused f JOIN memories_memory m ON m.id = f.id
),
ranked AS (
    SELECT a.*,
           a.rrf * {decay} * {usage_boost} AS score
    FROM aged a JOIN memories_memorykind k ON k.slug = a.kind_id
    {usage_join}
    ORDER BY score DESC, a.id DESC
    LIMIT %s
)
SELECT r.id, m.public_id, {content}, {kind}, s.public_id, r.score,
       1 - coalesce(r.distance, least(
           m.embedding <=> (SELECT qv FROM input),
           (SELECT min(w.embedding <=> (SELECT qv FROM input))
            FROM memories_memorywindow w WHERE w.memory_id = m.id)
       )) AS similarity,
       r.fts_matched, r.age_days, {original} <> '' AS has_original, {stale} AS stale
FROM ranked r
JOIN memories_memory m ON m.id = r.id
JOIN scopes_scope s ON s.id = m.scope_id
JOIN memories_memorykind k ON k.slug = m.kind_id
ORDER BY r.score DESC, r.id DESC
"""


RRF_FUSED = """fused AS (
    SELECT coalesce(v.id, f.id) AS id, v.distance, f.id IS NOT NULL AS fts_matched,
           coalesce(1.0 / ({rrf_k} + v.rank), 0)
           + coalesce({coverage} / ({rrf_k} + f.rank), 0) AS rrf
    FROM vec v FULL JOIN fts f ON f.id = v.id
),"""

# Linear: each leg's own score scaled to [0, 1] among this query's candidates (cosine distance
# between the nearest and the farthest vector candidate; text weight over the best one's, times
# coverage), then weighted; a row found by one leg only is scored by the other too.
LINEAR_FUSED = """both_legs AS MATERIALIZED (
    SELECT coalesce(v.id, f.id) AS id, v.distance AS leg_distance, f.id IS NOT NULL AS fts_matched,
           coalesce(f.weight, 0) AS text_score, coalesce(f.coverage, 0) AS coverage,
           coalesce(v.distance, m.embedding <=> (SELECT qv FROM input)) AS distance
    FROM vec v FULL JOIN fts f ON f.id = v.id JOIN memories_memory m ON m.id = coalesce(v.id, f.id)
),
fused AS (
    SELECT b.id, b.leg_distance AS distance, b.fts_matched,
           (greatest(0, (s.far - b.distance) / (s.far - s.near))
            + {text_weight} * {coverage} * b.text_score / greatest(s.best_text, 1e-9))
           / (1 + {text_weight}) AS rrf
    FROM both_legs b CROSS JOIN (
        SELECT min(distance) AS near,
               greatest(max(leg_distance), min(distance) + {spread}) AS far,
               max(text_score) AS best_text
        FROM both_legs
    ) s
),"""


AS_OF = "(SELECT as_of FROM input)"


def statement(
    *, scopes: str, kinds: bool, mode: str, tuning: Tuning, k: int, rows: int, as_of: bool = False
) -> str:
    """The recall statement for a mode ("hybrid", "vector", "fulltext"), a tuning and k.

    `scopes` is the array literal of the scope ids (`ScopeSelection.array`) and `rows` how many
    rows they hold, up to IDF_ROW_LIMIT (`rows_statement`). The ids, the row count and the legs'
    row limits are written into the statement rather than passed as parameters, so the planner
    sees them: with the limits and ids behind subqueries it sorted every row of 50 scopes by
    distance instead of walking the HNSW index (at 100,000 memories, 240 ms instead of 2 ms).

    `as_of`: the memories valid at the instant the `as_of` parameter holds (forgotten and
    superseded ones included when they were valid then), aged at that instant, with the text
    and kind they had then. The candidates are found by their text now.
    """
    kinds_filter = " AND m.kind_id = ANY((SELECT kinds FROM input)::text[])" if kinds else ""
    row_filter = FILTER.format(scopes=scopes, kinds=kinds_filter)
    if as_of:
        row_filter = row_filter.replace("m.valid AND ", VALID_AT.format(at=AS_OF) + " AND ", 1)
    path = EXACT_PATH if rows <= EXACT_ROWS else INDEX_PATH
    n_vec, n_fts = int(tuning.vector_depth * k), int(tuning.fulltext_depth * k)
    vector_leg = (
        VECTOR_LEG.format(filter=row_filter, n_vec=n_vec, order=path["order"])
        if mode != "fulltext"
        else NO_VECTOR_LEG
    )
    fulltext_leg = NO_FULLTEXT_LEG
    if mode != "vector":
        pool_condition = (
            "true" if tuning.any_term_always else "NOT EXISTS (SELECT 1 FROM fts_strict)"
        )
        if tuning.bm25:
            idf = BM25_IDF.format(rows=int(rows))
            scoring = BM25_SCORING.format(idf=idf, pool_condition=pool_condition, n_fts=n_fts)
            order = "weight DESC"
        else:
            scoring = BEFORE_SCORING.format(
                idf=POOL_IDF, weight=TS_RANK_WEIGHT, pool_condition=pool_condition
            )
            order = "strict DESC, terms DESC, coverage DESC, weight DESC"
        fulltext_leg = FULLTEXT_LEG.format(
            filter=row_filter,
            scan_limit=FULLTEXT_SCAN_LIMIT,
            term_rows=int(tuning.term_rows),
            n_fts=n_fts,
            scoring=scoring,
            order=order,
        )
    column = "b.coverage" if tuning.linear else "f.coverage"
    coverage = f"power({column}, {float(tuning.coverage_power)})"
    fused = (LINEAR_FUSED if tuning.linear else RRF_FUSED).format(
        rrf_k=RRF_K,
        text_weight=float(tuning.text_weight),
        coverage=coverage,
        spread=MIN_DISTANCE_SPREAD,
    )
    at = AS_OF if as_of else None
    return SEARCH.format(
        path_setting=path["setting"] if mode != "fulltext" else "",
        age=AGE_DAYS_AT.format(at=at or "now()"),
        content=AT_VERSION.format(column="content", at=at) if at else "m.content",
        kind=AT_VERSION.format(column="kind_id", at=at) if at else "m.kind_id",
        original=AT_VERSION.format(column="content_original", at=at)
        if at
        else "m.content_original",
        stale=STALE,
        decay=DECAY.format(age="a.age_days"),
        usage_boost=usage.BOOST,
        usage_join=usage.JOIN.format(memory="a.id"),
        vector_leg=vector_leg,
        fulltext_leg=fulltext_leg,
        fused=fused,
    )


def rows_statement(*, scopes: str, kinds: bool) -> str:
    """How many rows the scopes hold (of the kinds, a parameter), counted up to a parameter."""
    kinds_filter = " AND m.kind_id = ANY(%s::text[])" if kinds else ""
    return ROWS.format(filter=FILTER.format(scopes=scopes, kinds=kinds_filter))
