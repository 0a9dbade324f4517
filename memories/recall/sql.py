"""The recall statement's legs and the numbers that tune it (`Tuning`).

The statement (`statement.py`) is built from these fragments, chosen by mode, filters and tuning,
never from caller text; everything the caller sent goes in as a parameter. `recall.py` says what
it does.
"""

from __future__ import annotations

from dataclasses import dataclass

RRF_K = 60
# The HNSW candidate list. pgvector's default of 40 found 6 of the true 10 nearest at 100,000
# memories of the bench (clustered, template-like texts); 200 finds about 9 for ~3 ms more.
MIN_EF_SEARCH = 200
# At most this many rows matching the whole query are ranked (a very common word matches tens of
# thousands), and at most `Tuning.term_rows` rows per term are looked at: rare terms are seen
# whole, common ones (which say little) only in part. This bounds the full-text leg's cost.
FULLTEXT_SCAN_LIMIT = 1000
# Linear fusion scales cosine distances between the best candidate's and the farthest one's;
# with few candidates (a small scope) that spread is at least this much, so the only candidate
# still counts as a full match instead of dividing by zero.
MIN_DISTANCE_SPREAD = 0.2
IDF_ROW_LIMIT = 10_000


@dataclass(frozen=True)
class Tuning:
    """How recall ranks. The defaults are the product; bench/locomo.py --ablation varies them.

    - bm25: a full-text row weighs the idf of the query terms it matches, idf as BM25 has it,
      counted among the readable memories (term frequency and length are not counted: memories
      are short, and length normalisation measured worse); otherwise ts_rank_cd;
    - any_term_always: rows matching any query term always take part, beside those matching all
      of them; otherwise only when all terms together match nothing;
    - vector_depth, fulltext_depth: each leg keeps its best depth·k candidates;
    - term_rows: rows looked at per query term;
    - linear: fuse the legs' own scores (cosine scaled over the candidates, text weight scaled
      by the best one's), `text_weight` to 1; otherwise reciprocal rank fusion (k = 60);
    - coverage_power: a full-text row's share is scaled by its coverage (the idf-weighted share
      of the query's terms it matches) to this power.
    """

    bm25: bool = True
    any_term_always: bool = True
    vector_depth: int = 10
    fulltext_depth: int = 10
    term_rows: int = 300
    linear: bool = True
    text_weight: float = 5.0
    coverage_power: float = 1.5


# The read path as it was before BM25 (the ablation's starting point in bench/locomo.py).
BEFORE = Tuning(
    bm25=False,
    any_term_always=False,
    vector_depth=4,
    fulltext_depth=4,
    term_rows=100,
    linear=False,
    coverage_power=1.0,
)
PRODUCT = Tuning()

FILTER = "m.valid AND m.scope_id = ANY({scopes}){kinds}"

# The vector leg either compares every readable row (exact: the scope index, then a sort by
# distance) or walks the HNSW index with the filter applied as it goes (iterative scans). Which
# one is chosen here, from how many rows the scopes hold (`EXACT_ROWS`), not by the planner: it
# counts a distance as nearly free and sorted 10,000 rows (17 ms) where the index answers in 2.
# The exact path orders by an expression the index cannot serve; the index path makes sorting
# unattractive to the planner, which leaves it the index (the statement's other sorts cannot be
# avoided, so their plans stay as they were).
EXACT_ROWS = 3000
EXACT_PATH = {"order": " + 0", "setting": ""}
INDEX_PATH = {"order": "", "setting": "SET LOCAL enable_sort = off;"}

VECTOR_LEG = """
vec_memory AS MATERIALIZED (
    SELECT m.id, m.embedding <=> (SELECT qv FROM input) AS distance
    FROM memories_memory m
    WHERE m.embedding IS NOT NULL AND {filter}
    ORDER BY (m.embedding <=> (SELECT qv FROM input)){order}
    LIMIT {n_vec}
),
vec_window AS MATERIALIZED (
    SELECT w.memory_id AS id, w.embedding <=> (SELECT qv FROM input) AS distance
    FROM memories_memorywindow w JOIN memories_memory m ON m.id = w.memory_id
    WHERE {filter}
    ORDER BY w.embedding <=> (SELECT qv FROM input)
    LIMIT {n_vec}
),
vec AS (
    SELECT id, min(distance) AS distance,
           row_number() OVER (ORDER BY min(distance), id) AS rank
    FROM (SELECT id, distance FROM vec_memory UNION ALL SELECT id, distance FROM vec_window) u
    GROUP BY id
    ORDER BY rank
    LIMIT {n_vec}
),"""

NO_VECTOR_LEG = """
vec AS (SELECT NULL::bigint AS id, NULL::float8 AS distance, NULL::bigint AS rank WHERE false),"""

# fts_strict: rows matching the whole query (websearch syntax: phrases, "or", -negation).
# fts_terms: the query's own positive lexemes, read back from the tsquery so that syntax decides
# what a term is (negated terms stay out), each with up to {term_rows} rows that match it; df is
# how many readable rows match it (exact below that cap). {scoring} (BM25 or the earlier one)
# scores the rows that take part by the terms they match: coverage (their idf over that of all
# terms) and a weight; fts ranks them by it.
FULLTEXT_LEG = """
fts_strict AS MATERIALIZED (
    SELECT m.id FROM memories_memory m CROSS JOIN input i
    WHERE m.search_vector @@ i.tsq AND {filter}
    LIMIT {scan_limit}
),
fts_terms AS MATERIALIZED (
    SELECT t.term, r.ids, cardinality(r.ids) AS df
    FROM (
        SELECT DISTINCT ('''' || found[2] || '''')::tsquery AS term
        FROM regexp_matches(
            (SELECT tsq::text FROM input), '(!?)''((?:[^'']|'''')+)''', 'g'
        ) AS found
        WHERE found[1] = ''
    ) t
    CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(x.id), '{{}}'::bigint[]) AS ids FROM (
            SELECT m.id FROM memories_memory m
            WHERE m.search_vector @@ t.term AND {filter}
            LIMIT {term_rows}
        ) x
    ) r
),
{scoring}
fts AS (
    SELECT id, coverage, weight, row_number() OVER (ORDER BY {order}, id DESC) AS rank
    FROM fts_scored
    ORDER BY rank
    LIMIT {n_fts}
),"""

# BM25: the pool is scored from the per-term row lists first (no row is read again; exact for
# every term in at most term_rows rows), then its best 3·n rows are checked against every term,
# so which rows of a very common term the lists happened to hold never decides a rank.
BM25_SCORING = """fts_weights AS MATERIALIZED (
    SELECT t.term, t.ids, {idf} AS idf FROM fts_terms t
),
fts_listed AS MATERIALIZED (
    SELECT u.id, bool_or(u.strict) AS strict, sum(u.idf) AS idf
    FROM (
        SELECT id, true AS strict, 0::float8 AS idf FROM fts_strict
        UNION ALL
        SELECT x.id, false, w.idf
        FROM fts_weights w CROSS JOIN unnest(w.ids) AS x(id)
        WHERE {pool_condition}
    ) u
    GROUP BY u.id
    ORDER BY bool_or(u.strict) DESC, sum(u.idf) DESC, u.id DESC
    LIMIT 3 * {n_fts}
),
fts_scored AS MATERIALIZED (
    SELECT l.id, l.strict,
           CASE WHEN l.strict THEN 1.0 ELSE
               coalesce(s.idf / nullif((SELECT sum(idf) FROM fts_weights), 0), 0)
           END AS coverage,
           CASE WHEN l.strict THEN (SELECT coalesce(sum(idf), 0) FROM fts_weights)
                ELSE coalesce(s.idf, 0) END AS weight
    FROM fts_listed l JOIN memories_memory m ON m.id = l.id
    CROSS JOIN LATERAL (
        SELECT sum(w.idf) AS idf FROM fts_weights w WHERE m.search_vector @@ w.term
    ) s
),"""

# Before BM25: each row checked against every term, ts_rank_cd for the weight, idf among the
# rows that matched any term.
BEFORE_SCORING = """fts_pool AS MATERIALIZED (
    SELECT id, bool_or(strict) AS strict
    FROM (
        SELECT id, true AS strict FROM fts_strict
        UNION ALL
        SELECT unnest(ids), false FROM fts_terms WHERE {pool_condition}
    ) u
    GROUP BY id
),
fts_weights AS MATERIALIZED (
    SELECT t.term, {idf} AS idf FROM fts_terms t
),
fts_scored AS MATERIALIZED (
    SELECT p.id, p.strict, s.terms,
           CASE WHEN p.strict THEN 1.0 ELSE
               coalesce(s.idf / nullif((SELECT sum(idf) FROM fts_weights), 0), 0) END AS coverage,
           {weight} AS weight
    FROM fts_pool p JOIN memories_memory m ON m.id = p.id
    CROSS JOIN LATERAL (
        SELECT count(*) AS terms, sum(w.idf) AS idf
        FROM fts_weights w WHERE m.search_vector @@ w.term
    ) s
),"""

# idf as BM25 has it, counted among the readable rows (never other scopes' rows): df is exact
# up to term_rows, the number of rows ({rows}, counted by `ROWS` before the statement) up to
# IDF_ROW_LIMIT, so the count stays cheap however many memories there are (a term in 300 of
# 100,000 rows weighs as one in 300 of 10,000).
BM25_IDF = "ln(1 + (greatest({rows}, t.df) - t.df + 0.5) / (t.df + 0.5))"
ROWS = "SELECT count(*) FROM (SELECT 1 FROM memories_memory m WHERE {filter} LIMIT %s) r"
# Before BM25: idf among the rows that matched any term, ts_rank_cd for the weight.
POOL_IDF = "ln(1 + ((SELECT count(*) FROM fts_pool) + 1.0) / (t.df + 0.5))"
TS_RANK_WEIGHT = (
    "ts_rank_cd(m.search_vector, CASE WHEN p.strict THEN (SELECT tsq FROM input) ELSE "
    "(SELECT string_agg(term::text, ' | ')::tsquery FROM fts_terms) END)"
)

NO_FULLTEXT_LEG = """
fts AS (SELECT NULL::bigint AS id, NULL::float8 AS coverage, NULL::float8 AS weight,
               NULL::bigint AS rank WHERE false),"""
