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


def search_statements(selection, question: str, *, k: int = 10, ef: int | None = None):
    """The product's two search statements for the question with their values, as
    `search_found` builds them: [(text statement, values), (ranking statement, values)]. The
    text statement runs here (each in its own transaction) to give the ranking its values."""
    from django.db import connection

    from memories import embeddings
    from memories.entities.dictionary import query_keys
    from memories.recall import relevance, sessions
    from memories.recall.recall import ef_search_for, readable_rows
    from memories.recall.statement import PRODUCT, TextFound
    from zeromemory.core import prepared
    from zeromemory.core.sql import vector_literal

    rows = readable_rows(selection, None)
    keys, plain = query_keys(question)
    statements = PRODUCT.statements(
        scopes=selection.array, kinds=False, mode="hybrid", k=k, rows=rows
    )
    text_values = [question, None, None, relevance.query_names(question), keys, plain]
    with connection.cursor() as cursor:
        prepared.execute(cursor, statements.text, text_values, generic=True)
        text = TextFound(*cursor.fetchone())
    rank_values = [
        ef if ef is not None else ef_search_for(PRODUCT.vector_depth * k),
        vector_literal(embeddings.embed_query(question)),
        None,
        None,
        *text.values,
        k + sessions.EXTRA_CANDIDATES,
    ]
    return [(statements.text, text_values), (statements.rank, rank_values)]


def explained(sql: str, values: list, explain: str):
    """The statement's rows under `explain` (its leading settings run first, in the same
    transaction, as the product's one message runs them) and the milliseconds it took."""
    from django.db import connection, transaction

    from zeromemory.core.prepared import split_settings

    settings, statement = split_settings(sql)
    count = settings.count("%s")
    with transaction.atomic(), connection.cursor() as cursor:
        if settings:
            cursor.execute(settings, values[:count])
        started = time.perf_counter()
        cursor.execute(explain + statement, values[count:])
        found = cursor.fetchall()
        return found, (time.perf_counter() - started) * 1000


def explain_recall(actor, query: str) -> str:
    """EXPLAIN ANALYZE of one real recall's two statements: which indexes the legs use."""
    from memories.recall import recall as search

    selection = search.select_scopes(actor=actor, scopes=None)
    plans = []
    for sql, values in search_statements(selection, query):
        rows, _ = explained(sql, values, "EXPLAIN (ANALYZE, COSTS OFF) ")
        plans.append("\n".join(row[0] for row in rows))
    return "\n".join(plans)
