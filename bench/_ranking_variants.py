"""The read path's earlier ranking and the ablation of bench/locomo.py and bench/recall.py.

The product ranks with BM25 weights, rows matching any term always in the pool, and a linear
fusion of the legs' own scores (memories/recall/statement.py). Before those changes it weighed
rows with ts_rank_cd, took rows matching any term only when all terms together matched nothing,
and fused the legs by reciprocal rank (k = 60). Those variants are kept here, the only place that
runs them: `Variant` is a `Tuning` with the three switches, and builds its statements from the
product's fragments, swapping in the earlier pieces where a switch is off. With every switch on
they are the product's statements, character for character (`check_product`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from memories.recall import statement as product
from memories.recall.statement import Tuning

RRF_K = 60

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
    SELECT t.term, t.df, {idf} AS idf FROM fts_terms t
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
POOL_IDF = "ln(1 + ((SELECT count(*) FROM fts_pool) + 1.0) / (t.df + 0.5))"
TS_RANK_WEIGHT = (
    "ts_rank_cd(m.search_vector, CASE WHEN p.strict THEN (SELECT tsq FROM input) ELSE "
    "(SELECT string_agg(term::text, ' | ')::tsquery FROM fts_terms) END)"
)
# Any-term rows only when the rows matching all terms are none.
ONLY_WITHOUT_STRICT = "NOT EXISTS (SELECT 1 FROM fts_strict)"
# Where the product's BM25 pool takes every any-term row (the line the condition follows).
BM25_ANY_TERM_ROWS = "        FROM fts_weights w CROSS JOIN unnest(w.ids) AS x(id)\n"

RRF_FUSED = """fused AS (
    SELECT coalesce(v.id, f.id) AS id, v.distance, f.id IS NOT NULL AS fts_matched,
           coalesce(f.coverage, 0) AS coverage,
           coalesce(1.0 / ({rrf_k} + v.rank), 0)
           + coalesce({coverage} / ({rrf_k} + f.rank), 0) AS rrf
    FROM vec v FULL JOIN fts f ON f.id = v.id
),"""


@dataclass(frozen=True)
class Variant(Tuning):
    """A tuning with the earlier ranking's switches (each True is the product's way):

    - bm25: weights by BM25 idf within the readable scopes; otherwise ts_rank_cd;
    - any_term_always: rows matching any term always take part; otherwise only when all terms
      together match nothing;
    - linear: linear fusion of the legs' scores; otherwise reciprocal rank fusion (k = 60).
    """

    bm25: bool = True
    any_term_always: bool = True
    linear: bool = True

    def statements(
        self, *, scopes: str, kinds: bool, mode: str, k: int, rows: int, as_of: bool = False
    ) -> product.Statements:
        where = product.row_filter(scopes=scopes, kinds=kinds, as_of=as_of)
        search_where = product.row_filter(scopes=scopes, kinds=kinds, as_of=as_of, search=True)
        n_vec, n_fts = int(self.vector_depth * k), int(self.fulltext_depth * k)
        pool_condition = "true" if self.any_term_always else ONLY_WITHOUT_STRICT
        if self.bm25:
            scoring = product.BM25_SCORING
            if not self.any_term_always:
                scoring = _replace_once(
                    scoring,
                    BM25_ANY_TERM_ROWS,
                    f"{BM25_ANY_TERM_ROWS}        WHERE {ONLY_WITHOUT_STRICT}\n",
                )
            scoring = scoring.format(idf=product.BM25_IDF.format(rows=int(rows)), n_fts=n_fts)
            order = "weight DESC"
        else:
            scoring = BEFORE_SCORING.format(
                idf=POOL_IDF, weight=TS_RANK_WEIGHT, pool_condition=pool_condition
            )
            order = "strict DESC, terms DESC, coverage DESC, weight DESC"
        if self.linear:
            fused = product.linear_fused(self)
        else:
            coverage = f"power(f.coverage, {float(self.coverage_power)})"
            fused = RRF_FUSED.format(rrf_k=RRF_K, coverage=coverage)
        return product.assemble(
            vector_leg=product.vector_leg(
                filter=where, search_filter=search_where, rows=rows, n_vec=n_vec
            )
            if mode != "fulltext"
            else product.NO_VECTOR_LEG,
            fulltext_leg=product.fulltext_leg(
                filter=search_where,
                term_rows=self.term_rows,
                n_fts=n_fts,
                scoring=scoring,
                order=order,
            )
            if mode != "vector"
            else None,
            fused=fused,
            mode=mode,
            rows=rows,
            as_of=as_of,
            scopes=scopes,
        )


def _replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise RuntimeError(f"the product's statement changed: {old!r} is not in it once")
    return text.replace(old, new)


# The read path as it was before BM25 (the ablation's starting point).
BEFORE = Variant(
    session_lift=False,
    relevance_floor=False,
    entity_lift=False,
    expansion=False,
    bm25=False,
    any_term_always=False,
    vector_depth=4,
    fulltext_depth=4,
    term_rows=100,
    linear=False,
    coverage_power=1.0,
)
PRODUCT = Variant(**{f.name: getattr(product.PRODUCT, f.name) for f in fields(Tuning)})


def check_product() -> None:
    """With every switch on, the variant's statements are the product's (for every mode)."""
    for mode in ("hybrid", "vector", "fulltext"):
        for as_of in (False, True):
            shape = {"scopes": "'{1}'::bigint[]", "kinds": True, "mode": mode, "k": 10}
            shape.update(rows=5000, as_of=as_of)
            if PRODUCT.statements(**shape) != product.PRODUCT.statements(**shape):
                raise RuntimeError(f"the bench's product variant differs ({mode}, {as_of})")


def variants() -> list[tuple[str, Variant]]:
    """(name, Variant): the read path before, each change alone on top of it, all of them, and
    the product without each step that follows the statement (the lift, the floor)."""
    check_product()
    changes = {
        "BM25 idf within the readable scopes": {"bm25": True},
        "any-term rows always": {"any_term_always": True},
        "deeper pools (10k per leg, 300 rows/term)": {
            "vector_depth": PRODUCT.vector_depth,
            "fulltext_depth": PRODUCT.fulltext_depth,
            "term_rows": PRODUCT.term_rows,
        },
        "linear fusion of the legs' scores (1:5)": {"linear": True},
        "coverage^1.5": {"coverage_power": PRODUCT.coverage_power},
        "same-conversation lift": {"session_lift": True},
        "relevance floor": {"relevance_floor": True},
        "entity lift": {"entity_lift": True},
        "entity expansion": {"expansion": True},
    }
    together: dict[str, object] = {}
    rows: list[tuple[str, Variant]] = [("before (main)", BEFORE)]
    for name, change in changes.items():
        rows.append((f"+ {name} alone", replace(BEFORE, **change)))
        together.update(change)
    everything = replace(BEFORE, **together)
    assert everything == PRODUCT, "the ablation's changes must add up to the product's tuning"
    rows.append(("all together (the product)", everything))
    # The steps after the statement, each taken out of the product (issue 40's ablation).
    rows.append(("the product without the lift", replace(PRODUCT, session_lift=False)))
    rows.append(("the product without the floor", replace(PRODUCT, relevance_floor=False)))
    rows.append(
        ("the product without both", replace(PRODUCT, session_lift=False, relevance_floor=False))
    )
    # The entity steps (issue 40): the product without them is the read path before them.
    without_entities = replace(PRODUCT, entity_lift=False, expansion=False)
    rows.append(("the product without the entity steps", without_entities))
    rows.append(("the product without the entity lift", replace(PRODUCT, entity_lift=False)))
    rows.append(("the product without the expansion", replace(PRODUCT, expansion=False)))
    return rows
