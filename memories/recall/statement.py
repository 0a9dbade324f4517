"""The recall statement: one SQL statement that ranks the memories an actor may read.

`recall.py` says what it does; this module is how: the legs (vector, full text), their fusion,
the kind weight and age decay, the usage boost, and the numbers that tune them (`Tuning`).
The statement is built from these fragments, chosen by mode, filters and tuning, never from
caller text; everything the caller sent goes in as a parameter. The fragments of the memory's
validity, age and text at an instant are shared with the briefing's sections (`sections.py`).

The usage boost: a memory agents reported using (mark_used) ranks higher, within bounds.

boost = 1 + MAX_EXTRA · (1 − e^(−uses / USES_SCALE)) · 0.5^(days since last use / HALF_LIFE_DAYS)

- never above 1 + MAX_EXTRA (×1.4), and slow to get there: ×1.02 after one use, ×1.06 after
  three, ×1.16 after ten, ×1.31 after thirty, so a memory that helped once does not push aside
  the right answer to another question (bench/recall.py's held-out half measured a small loss
  with a scale of 3, none with 20);
- it fades with the time since the memory was last used (half of it gone after 30 days);
- a memory found wrong has its uses reset (`memories.rules.usage`), so its boost is gone.

It multiplies recall's score as one factor of its own, beside the kind weight and the age decay,
reading the one-row-per-memory `UsageCounter` table through a left join.

The ranking's earlier variants (ts_rank_cd weights, reciprocal rank fusion, any-term rows only
when all terms match nothing) are the benchmark's, in bench/_ranking_variants.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memories.entities.names import MAX_MERGE_HOPS
from memories.models import ConflictStatus

# The memory's validity, age, text at an instant, staleness and decay: shared with sections.py.
# A memory's age in days at an instant ({at}), never negative.
AGE_DAYS_AT = "greatest(extract(epoch FROM {at} - m.created_at)::float8 / 86400, 0)"
AGE_DAYS = AGE_DAYS_AT.format(at="now()")
# The memory `m` was valid at the instant {at}: within its outer bounds, and, only when it has a
# gap (forgotten or superseded, then restored), inside one of its periods. Most rows are decided
# by their own columns; the periods' index is read for the few with gaps.
# `m` is a memory or its search row (memories_memorysearch, whose `memory_id` is the memory's
# id): both carry the bounds.
VALID_AT = (
    "m.valid_from <= {at} AND (m.valid_until IS NULL OR m.valid_until > {at})"
    " AND (NOT m.validity_gaps OR EXISTS (SELECT 1 FROM memories_validityperiod p"
    " WHERE p.memory_id = m.{id} AND p.valid_from <= {at}"
    " AND (p.valid_until IS NULL OR p.valid_until > {at})))"
)
# What `m` said at {at}: the text an edit after that instant replaced (the earliest version
# written after it), or its text now. {column} is content, content_original or kind_id.
AT_VERSION = (
    "coalesce((SELECT v.{column} FROM memories_memoryversion v WHERE v.memory_id = m.id"
    " AND v.created_at > {at} ORDER BY v.number LIMIT 1), m.{column})"
)
# Not recalled, not confirmed (an absorbed write, an edit, a restore) and not written within
# one half-life of its kind (`k`): the memory is marked stale in answers, never hidden.
# Compared as ages in days, not as an instant a half-life before now: a half-life a staff member
# set near its column's bound (2^31 - 1 days) is no instant PostgreSQL can represent.
STALE = (
    "extract(epoch FROM now() - greatest(m.created_at, m.confirmed_at, m.last_recalled_at))"
    " / 86400 > greatest(k.half_life_days, 1)"
)
# Decay stops after this many half-lives (0.5^100 ≈ 8e-31): a memory older than that ranks as if
# it were that old. Unbounded, the power of a memory dated 1970 (20,000 days, half-life 14) is
# below the smallest float8 and PostgreSQL raises an underflow instead of answering; the bound
# also keeps the product with the fused score and the other factors far from it. The exponent is
# bounded, never an error caught: any instant a row may hold gives a number.
MAX_HALF_LIVES = 100
# The kind's weight times its age decay, 0.5^(age / half-life), for a row `k` of the catalogue.
DECAY = f"k.weight * power(0.5, least({{age}} / greatest(k.half_life_days, 1), {MAX_HALF_LIVES}))"

# The usage boost (the module docstring says how it grows and fades).
MAX_EXTRA = 0.4
USES_SCALE = 20.0
HALF_LIFE_DAYS = 30.0

USAGE_JOIN = "LEFT JOIN memories_memoryusage u ON u.memory_id = {memory}"
# The fade's exponent is bounded (`MAX_HALF_LIVES`): a last use dated 1970 or year 1 would
# otherwise make the power underflow, and PostgreSQL answers an error. The uses' exponent is a
# numeric (an integer over a decimal), which goes to 0 without an error, and stays NULL without
# a usage row (LEAST and GREATEST skip NULLs: bounding it would give that memory a boost).
USAGE_BOOST = (
    f"(1 + {MAX_EXTRA} * coalesce((1 - exp(-u.uses / {USES_SCALE}))"
    " * power(0.5, least(greatest(extract(epoch FROM now() - u.last_used_at)::float8 / 86400, 0)"
    f" / {HALF_LIFE_DAYS}, {MAX_HALF_LIVES})), 0))"
)

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
    """The numbers recall ranks with; `PRODUCT` is the product's. bench/ varies them (and
    subclasses this with the earlier ranking's variants, `bench/_ranking_variants.py`), which is
    why the statements are asked of the tuning (`Tuning.statements`).

    - vector_depth, fulltext_depth: each leg keeps its best depth·k candidates;
    - term_rows: rows looked at per query term;
    - text_weight: the full-text leg's weight in the fusion, the vector leg's being 1;
    - coverage_power: a full-text row's share is scaled by its coverage (the idf-weighted share
      of the query's terms it matches) to this power;
    - session_lift, relevance_floor, entity_lift, expansion: the steps around the statement
      (`sessions.py`, `relevance.py`, `entity_steps.py`), switched off only by the bench's
      ablation (without entity_lift the statement is given no query keys, so no memory matches).
    """

    vector_depth: int = 10
    fulltext_depth: int = 10
    term_rows: int = 300
    text_weight: float = 5.0
    coverage_power: float = 1.5
    session_lift: bool = True
    relevance_floor: bool = True
    entity_lift: bool = True
    expansion: bool = True

    def statements(
        self, *, scopes: str, kinds: bool, mode: str, k: int, rows: int, as_of: bool = False
    ) -> Statements:
        return statements(
            scopes=scopes, kinds=kinds, mode=mode, tuning=self, k=k, rows=rows, as_of=as_of
        )


PRODUCT = Tuning()

# The rows a leg may return, on a memory or its search row `m` (the same column names). On the
# search table the scope ids, written into the statement as literals, let the planner read only
# their partitions (memories.models.search).
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
    SELECT m.memory_id AS id, m.embedding <=> (SELECT qv FROM input) AS distance
    FROM memories_memorysearch m
    WHERE m.embedding IS NOT NULL AND {search_filter}
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
# how many readable rows match it (exact below that cap). {scoring} (BM25_SCORING; the bench's
# earlier variants in bench/_ranking_variants.py) scores the rows that take part by the terms
# they match: coverage (their idf over that of all terms) and a weight; fts ranks them by it.
FULLTEXT_LEG = """
fts_strict AS MATERIALIZED (
    SELECT m.memory_id AS id FROM memories_memorysearch m CROSS JOIN input i
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
            SELECT m.memory_id AS id FROM memories_memorysearch m
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
    SELECT t.term, t.ids, t.df, {idf} AS idf FROM fts_terms t
),
fts_listed AS MATERIALIZED (
    SELECT u.id, bool_or(u.strict) AS strict, sum(u.idf) AS idf
    FROM (
        SELECT id, true AS strict, 0::float8 AS idf FROM fts_strict
        UNION ALL
        SELECT x.id, false, w.idf
        FROM fts_weights w CROSS JOIN unnest(w.ids) AS x(id)
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

# idf as BM25 has it, counted among the readable rows (never other scopes' rows): df is exact
# up to term_rows, the number of rows ({rows}, counted by `ROWS` before the statement) up to
# IDF_ROW_LIMIT, so the count stays cheap however many memories there are (a term in 300 of
# 100,000 rows weighs as one in 300 of 10,000).
BM25_IDF = "ln(1 + (greatest({rows}, t.df) - t.df + 0.5) / (t.df + 0.5))"
ROWS = "SELECT count(*) FROM (SELECT 1 FROM memories_memory m WHERE {filter} LIMIT %s) r"

# The full-text leg and the query's entities need no vector: this statement ranks the one and
# finds the others while the model embeds the query (`recall.search_found`), on the request's
# connection, and answers them as arrays the ranking statement takes as values. The text leg's
# rows in its rank order; the query's entities by survivor, then id.
TEXT_SEARCH = """
SET LOCAL jit = off;
WITH RECURSIVE input AS MATERIALIZED (
    SELECT websearch_to_tsquery('english', %s::text) AS tsq,
           %s::text[] AS kinds, %s::timestamptz AS as_of, %s::text AS names,
           %s::text[] AS entity_keys, %s::bool[] AS entity_plain
),{query_entities}{fulltext_leg}
SELECT ARRAY(SELECT id FROM fts ORDER BY rank)::text,
       ARRAY(SELECT coverage FROM fts ORDER BY rank)::text,
       ARRAY(SELECT weight FROM fts ORDER BY rank)::text,
       ARRAY(SELECT rank FROM fts ORDER BY rank)::text,
       ARRAY(SELECT id FROM query_entities ORDER BY root, id)::text,
       ARRAY(SELECT root FROM query_entities ORDER BY root, id)::text,
       ARRAY(SELECT rare FROM query_entities ORDER BY root, id)::text,
       {unknown_name}
"""

# The vector leg, the fusion with the text leg's rows (the text statement's answer, or none in
# vector mode), the decay and boost, and the answer's columns.
RANK_SEARCH = """
SET LOCAL hnsw.ef_search = %s;
SET LOCAL hnsw.iterative_scan = relaxed_order;
SET LOCAL jit = off;{path_setting}
WITH input AS MATERIALIZED (
    SELECT %s::vector AS qv, %s::text[] AS kinds, %s::timestamptz AS as_of,
           %s::bigint[] AS text_ids, %s::float8[] AS text_coverage, %s::float8[] AS text_weight,
           %s::bigint[] AS text_ranks, %s::bigint[] AS entity_ids, %s::bigint[] AS entity_roots,
           %s::bool[] AS entity_rare, %s::bool AS unknown_name
),
query_entities AS MATERIALIZED (
    SELECT q.id, q.root, q.rare FROM unnest(
        (SELECT entity_ids FROM input), (SELECT entity_roots FROM input),
        (SELECT entity_rare FROM input)
    ) AS q(id, root, rare)
),{vector_leg}
fts AS MATERIALIZED (
    SELECT f.id, f.coverage, f.weight, f.rank FROM unnest(
        (SELECT text_ids FROM input), (SELECT text_coverage FROM input),
        (SELECT text_weight FROM input), (SELECT text_ranks FROM input)
    ) AS f(id, coverage, weight, rank)
),
{fused}
aged AS (
    SELECT f.*, m.kind_id,
           {age} AS age_days
    FROM fused f CROSS JOIN LATERAL (
        SELECT m.kind_id, m.created_at FROM memories_memory m WHERE m.id = f.id OFFSET 0
    ) m
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
       r.fts_matched, r.age_days, {original} <> '' AS has_original, {stale} AS stale,
       r.coverage, {conversations} AS conversations,
       (SELECT unknown_name FROM input) AS unknown_name,
       {entity_match} AS entity_match, {entity_about} AS entity_about, {disputed} AS disputed
FROM ranked r
JOIN memories_memory m ON m.id = r.id
JOIN scopes_scope s ON s.id = m.scope_id
JOIN memories_memorykind k ON k.slug = m.kind_id
ORDER BY r.score DESC, r.id DESC
"""

# The candidates' memories are read by their key, one lookup each (LATERAL, kept apart from the
# join by OFFSET 0, so the planner cannot fold it back into one), never by a join the planner
# may turn into a scan of every memory, hashed: with the generic plan's estimate of 200
# candidates (build_context's k of 20) it did so at 2,000 memories, 2.5 ms of the statement's 6.
#
# Linear: each leg's own score scaled to [0, 1] among this query's candidates (cosine distance
# between the nearest and the farthest vector candidate; text weight over the best one's, times
# coverage), then weighted; a row found by one leg only is scored by the other too.
LINEAR_FUSED = """both_legs AS MATERIALIZED (
    SELECT coalesce(v.id, f.id) AS id, v.distance AS leg_distance, f.id IS NOT NULL AS fts_matched,
           coalesce(f.weight, 0) AS text_score, coalesce(f.coverage, 0) AS coverage,
           coalesce(v.distance, m.embedding <=> (SELECT qv FROM input)) AS distance
    FROM vec v FULL JOIN fts f ON f.id = v.id
    CROSS JOIN LATERAL (
        SELECT m.embedding FROM memories_memory m WHERE m.id = coalesce(v.id, f.id) OFFSET 0
    ) m
),
fused AS (
    SELECT b.id, b.leg_distance AS distance, b.fts_matched, b.coverage,
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

# Whether the query names something no readable memory mentions: a name of the query
# (`relevance.query_names`, the input's `names`) whose lexeme is one of the query's terms that no
# readable row holds (df 0 in the full-text leg). The relevance floor's `Signals.unknown_name`;
# read once per query; false without the full-text leg.
UNKNOWN_NAME = (
    "EXISTS (SELECT 1 FROM fts_terms t WHERE t.df = 0 AND t.term::text IN ("
    "SELECT quote_literal(n) FROM unnest(tsvector_to_array("
    "to_tsvector('english', (SELECT names FROM input)))) AS n))"
)

# Whether an open review-queue item names the memory `m` (`memories.selectors.disputed`'s
# question, asked of the answer's rows inside the statement instead of in a statement after it;
# each side of an item through its own index).
_OPEN = ConflictStatus.OPEN.value
DISPUTED = (
    "(EXISTS (SELECT 1 FROM memories_conflict c"  # noqa: S608 (a constant of the model)
    f" WHERE c.memory_a_id = m.id AND c.status = '{_OPEN}')"
    " OR EXISTS (SELECT 1 FROM memories_conflict c"
    f" WHERE c.memory_b_id = m.id AND c.status = '{_OPEN}'))"
)

# The conversations (sessions) the memory was written or absorbed in, for the same-conversation
# lift (`sessions.py`): read for the answer's rows only, through the provenance's memory index.
CONVERSATIONS = (
    "ARRAY(SELECT DISTINCT p.conversation_id FROM memories_provenance p"
    " WHERE p.memory_id = m.id AND p.conversation_id <> '')"
)


# The entities the query names (the entity lift, `entity_steps.py`): its keys (`input.entity_keys`,
# `memories.entities.dictionary.query_keys`) matched against the aliases of the readable scopes,
# as the dictionary match does on write (a plain lower-case word never matches a capitalised
# one-word alias); each resolved to the survivor of the merges that folded it, however many hops
# (`query_roots`), then widened to every entity folded into that survivor (`query_family`), whose
# mentions are the survivor's. Only a rare entity counts: one that at most {common} mentions
# name (a share of the readable rows, `entity_steps.common_mentions`); a name most memories
# carry (the speaker of a chat, the team's own product) says nothing about which memory answers.
QUERY_ENTITIES = """
query_named AS MATERIALIZED (
    SELECT DISTINCT a.entity_id AS id
    FROM unnest((SELECT entity_keys FROM input), (SELECT entity_plain FROM input)) AS q(key, plain)
    JOIN memories_entityalias a ON a.normalized = q.key AND a.scope_id = ANY({scopes})
    WHERE NOT (q.plain AND a.alias <> lower(a.alias))
),
query_up AS (
    SELECT e.id, e.merged_into_id AS next, 0 AS hops
    FROM memories_entity e WHERE e.id IN (SELECT id FROM query_named)
    UNION ALL
    SELECT e.id, e.merged_into_id, u.hops + 1
    FROM query_up u JOIN memories_entity e ON e.id = u.next WHERE u.hops < {hops}
),
query_roots AS MATERIALIZED (SELECT DISTINCT id FROM query_up WHERE next IS NULL),
query_family AS (
    SELECT r.id AS root, r.id, 0 AS hops FROM query_roots r
    UNION ALL
    SELECT f.root, e.id, f.hops + 1
    FROM query_family f JOIN memories_entity e ON e.merged_into_id = f.id WHERE f.hops < {hops}
),
query_entities AS MATERIALIZED (
    SELECT q.id, q.root, (SELECT count(*) FROM (
        SELECT 1 FROM memories_entitymention x
        WHERE x.entity_id IN (SELECT f.id FROM query_family f WHERE f.root = q.root)
        LIMIT {common} + 1
    ) c) <= {common} AS rare
    FROM query_family q
),"""
# Whether the memory `m` mentions an entity the query names: 2 a rare one
# (`Signals.entity_match`), 1 a common one only, 0 none.
ENTITY_MATCH = (
    "coalesce((SELECT max(CASE WHEN q.rare THEN 2 ELSE 1 END) FROM memories_entitymention x"
    " JOIN query_entities q ON q.id = x.entity_id WHERE x.memory_id = m.id), 0)"
)
# The name of the entity the query names that the memory `m` is about (a rare one before a
# common one, then by name; merged ones by their survivor's name), or NULL: build_context groups
# its rows by it.
ENTITY_ABOUT = (
    "(SELECT r.name FROM memories_entitymention x JOIN query_entities q ON q.id = x.entity_id"
    " JOIN memories_entity r ON r.id = q.root WHERE x.memory_id = m.id"
    " ORDER BY q.rare DESC, r.name LIMIT 1)"
)


COMMON_SHARE = 0.1
COMMON_MENTIONS_MIN = 5


def common_mentions(rows: int) -> int:
    """How many mentions make an entity common among `rows` readable memories: a tenth of them,
    and never fewer than COMMON_MENTIONS_MIN (in a small scope three memories about one service
    still single them out)."""
    return max(COMMON_MENTIONS_MIN, int(COMMON_SHARE * rows))


def row_filter(*, scopes: str, kinds: bool, as_of: bool, search: bool = False) -> str:
    """The rows a leg may return: valid (at the `as_of` parameter's instant, with `as_of`) in
    the scopes, of the kinds the `kinds` parameter holds (with `kinds`); on the memory `m`, or
    on its search row with `search`."""
    kinds_filter = " AND m.kind_id = ANY((SELECT kinds FROM input)::text[])" if kinds else ""
    found = FILTER.format(scopes=scopes, kinds=kinds_filter)
    if as_of:
        valid_at = VALID_AT.format(at=AS_OF, id="memory_id" if search else "id")
        found = found.replace("m.valid AND ", valid_at + " AND ", 1)
    return found


def vector_leg(*, filter: str, search_filter: str, rows: int, n_vec: int) -> str:
    path = EXACT_PATH if rows <= EXACT_ROWS else INDEX_PATH
    return VECTOR_LEG.format(
        filter=filter, search_filter=search_filter, n_vec=n_vec, order=path["order"]
    )


def fulltext_leg(*, filter: str, term_rows: int, n_fts: int, scoring: str, order: str) -> str:
    return FULLTEXT_LEG.format(
        filter=filter,
        scan_limit=FULLTEXT_SCAN_LIMIT,
        term_rows=int(term_rows),
        n_fts=n_fts,
        scoring=scoring,
        order=order,
    )


def linear_fused(tuning: Tuning) -> str:
    return LINEAR_FUSED.format(
        text_weight=float(tuning.text_weight),
        coverage=f"power(b.coverage, {float(tuning.coverage_power)})",
        spread=MIN_DISTANCE_SPREAD,
    )


@dataclass(frozen=True)
class Statements:
    """A search's two statements (`recall.search_found` runs them in turn):

    - `text`: the full-text leg ranked, the query's entities and whether it names something no
      readable memory mentions; it needs no vector, so it runs while the model embeds the query.
      None in vector mode (no full-text leg, and no query keys there).
    - `rank`: the vector leg, the fusion with the text statement's answer (`TextFound.values`),
      the decay and boost, and the answer's rows.
    """

    text: str | None
    rank: str


def assemble(
    *,
    vector_leg: str,
    fulltext_leg: str | None,
    fused: str,
    mode: str,
    rows: int,
    as_of: bool,
    scopes: str,
) -> Statements:
    """The two statements around the legs and the fusion: the settings, the query's entities,
    the decay and usage boost, the text (as it read at `as_of`, with `as_of`) and the answer's
    columns. `fulltext_leg` is None in vector mode."""
    at = AS_OF if as_of else None
    path = EXACT_PATH if rows <= EXACT_ROWS else INDEX_PATH
    text = None
    if fulltext_leg is not None:
        text = TEXT_SEARCH.format(
            query_entities=QUERY_ENTITIES.format(
                scopes=scopes, common=common_mentions(rows), hops=MAX_MERGE_HOPS
            ),
            fulltext_leg=fulltext_leg.rstrip().removesuffix(","),
            unknown_name=UNKNOWN_NAME,
        )
    rank = RANK_SEARCH.format(
        path_setting=path["setting"] if mode != "fulltext" else "",
        age=AGE_DAYS_AT.format(at=at or "now()"),
        content=AT_VERSION.format(column="content", at=at) if at else "m.content",
        kind=AT_VERSION.format(column="kind_id", at=at) if at else "m.kind_id",
        original=AT_VERSION.format(column="content_original", at=at)
        if at
        else "m.content_original",
        stale=STALE,
        conversations=CONVERSATIONS,
        entity_match=ENTITY_MATCH,
        entity_about=ENTITY_ABOUT,
        disputed=DISPUTED,
        decay=DECAY.format(age="a.age_days"),
        usage_boost=USAGE_BOOST,
        usage_join=USAGE_JOIN.format(memory="a.id"),
        vector_leg=vector_leg,
        fused=fused,
    )
    return Statements(text=text, rank=rank)


def statements(
    *, scopes: str, kinds: bool, mode: str, tuning: Tuning, k: int, rows: int, as_of: bool = False
) -> Statements:
    """The recall statements for a mode ("hybrid", "vector", "fulltext": the legs alone are for
    tests and the bench), a tuning and k.

    `scopes` is the array literal of the scope ids (`ScopeSelection.array`) and `rows` how many
    rows they hold, up to IDF_ROW_LIMIT (`rows_statement`). The ids, the row count and the legs'
    row limits are written into the statements rather than passed as parameters, so the planner
    sees them: with the limits and ids behind subqueries it sorted every row of 50 scopes by
    distance instead of walking the HNSW index (at 100,000 memories, 240 ms instead of 2 ms).

    `as_of`: the memories valid at the instant the `as_of` parameter holds (forgotten and
    superseded ones included when they were valid then), aged at that instant, with the text
    and kind they had then. The candidates are found by their text now.
    """
    where = row_filter(scopes=scopes, kinds=kinds, as_of=as_of)
    search_where = row_filter(scopes=scopes, kinds=kinds, as_of=as_of, search=True)
    n_vec, n_fts = int(tuning.vector_depth * k), int(tuning.fulltext_depth * k)
    bm25 = BM25_SCORING.format(idf=BM25_IDF.format(rows=int(rows)), n_fts=n_fts)
    return assemble(
        vector_leg=vector_leg(filter=where, search_filter=search_where, rows=rows, n_vec=n_vec)
        if mode != "fulltext"
        else NO_VECTOR_LEG,
        fulltext_leg=fulltext_leg(
            filter=search_where,
            term_rows=tuning.term_rows,
            n_fts=n_fts,
            scoring=bm25,
            order="weight DESC",
        )
        if mode != "vector"
        else None,
        fused=linear_fused(tuning),
        mode=mode,
        rows=rows,
        as_of=as_of,
        scopes=scopes,
    )


def rows_statement(*, scopes: str, kinds: bool) -> str:
    """How many rows the scopes hold (of the kinds, a parameter), counted up to a parameter."""
    kinds_filter = " AND m.kind_id = ANY(%s::text[])" if kinds else ""
    return ROWS.format(filter=FILTER.format(scopes=scopes, kinds=kinds_filter))


@dataclass(frozen=True)
class TextFound:
    """The text statement's answer (`TEXT_SEARCH`'s columns, in order): the full-text leg's
    rows in rank order, the query's entities, whether the query names something unknown. Empty
    in vector mode. `values` are the ranking statement's parameters after the vector's.

    The arrays stay PostgreSQL's text of them (`{1,2,3}`), given back as they came: they are
    only the ranking statement's input, and reading a hundred rows' ids and scores into Python
    lists, then writing them out again, took a few tenths of a millisecond each way."""

    ids: str = "{}"
    coverage: str = "{}"
    weight: str = "{}"
    ranks: str = "{}"
    entity_ids: str = "{}"
    entity_roots: str = "{}"
    entity_rare: str = "{}"
    unknown_name: bool = False

    @property
    def values(self) -> list[Any]:
        return [
            self.ids,
            self.coverage,
            self.weight,
            self.ranks,
            self.entity_ids,
            self.entity_roots,
            self.entity_rare,
            bool(self.unknown_name),
        ]
