"""Measuring for bench/recall.py: the lexeme check of the paraphrases, recall@10 and MRR by query
type, the timing loop, and the plan of one recall statement."""

from __future__ import annotations

import time

from _recall_data import Query


def no_shared_lexemes(pairs: list[tuple[str, str]]) -> list[tuple[str, str, list[str]]]:
    from django.db import connection

    clashes = []
    with connection.cursor() as cursor:
        for memory, query in pairs:
            cursor.execute(
                "SELECT ARRAY(SELECT unnest(tsvector_to_array(to_tsvector('english', %s))) "
                "INTERSECT SELECT unnest(tsvector_to_array(to_tsvector('english', %s))))",
                [memory, query],
            )
            shared = cursor.fetchone()[0]
            if shared:
                clashes.append((memory, query, shared))
    return clashes


NEAREST = "hybrid, nearest anyway"


def quality(
    actor, queries: list[Query], public_ids: list[str], mode: str, tuning=None
) -> dict[str, dict]:
    """recall@10 and MRR by query type; with `tuning`, through search() (the ablation). The
    mode `NEAREST` is hybrid recall asking for the nearest anyway (no relevance floor)."""
    from memories.recall.recall import recall, search, select_scopes

    ranks: dict[str, list[int | None]] = {}
    selection = select_scopes(actor=actor, scopes=None)
    for query in queries:
        if mode == NEAREST:  # hybrid without the relevance floor, as recall was before it
            hits = recall(actor=actor, query=query.text, k=10, nearest=True)
        elif tuning is None:
            hits = recall(actor=actor, query=query.text, k=10, mode=mode)
        else:
            hits = search(query=query.text, selection=selection, k=10, tuning=tuning)
        found = [hit.id for hit in hits]
        target = public_ids[query.relevant]
        rank = found.index(target) + 1 if target in found else None
        ranks.setdefault(query.type, []).append(rank)
        ranks.setdefault("all", []).append(rank)
    return {
        qtype: {
            "recall@10": sum(r is not None for r in values) / len(values),
            "mrr": sum(1 / r for r in values if r is not None) / len(values),
            "n": len(values),
        }
        for qtype, values in ranks.items()
    }


def print_quality(title: str, results: dict[str, dict[str, dict]]) -> None:
    print(title)
    width = max(10, *(len(mode) for mode in results))
    print(f"  {'mode':{width}} {'all':>17} {'paraphrase':>17} {'keyword':>17} {'mixed':>17}")
    print(f"  {'':{width}}" + "   recall@10   MRR" * 4)
    for mode, by_type in results.items():
        cells = "".join(
            f"   {by_type[t]['recall@10']:9.3f} {by_type[t]['mrr']:5.3f}"
            for t in ("all", "paraphrase", "keyword", "mixed")
        )
        print(f"  {mode:{width}}{cells}")


def timed(function, arguments: list, rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        for argument in arguments:
            started = time.perf_counter()
            function(argument)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def explain_recall(actor, query: str) -> str:
    """EXPLAIN ANALYZE of one real recall statement: which indexes the legs use."""
    from django.db import connection

    from memories.recall import recall as search

    plans: list[str] = []

    def explain(execute, sql, params, many, context):
        if "WITH input" in sql and not plans:
            head, _, tail = sql.partition("WITH input")
            execute(f"{head}EXPLAIN (ANALYZE, COSTS OFF) WITH input{tail}", params, many, context)
            cursor = context["cursor"]
            while cursor.nextset():
                pass
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(explain):
        search.search(query=query, selection=search.select_scopes(actor=actor, scopes=None), k=10)
    return plans[0]
