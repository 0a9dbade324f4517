"""Recall quality on a labelled set, then recall and build_context latency at 100,000 memories.

    .venv/bin/python bench/recall.py [--memories 100000] [--rounds 2] [--skip-load] [--ablation]

1. Quality. A labelled set generated from templates with a fixed seed: 1,110 memories of
   every kind in two scopes, and 210 queries that each have one known relevant memory:
   - paraphrase (60): the query shares no English lexeme with its memory (checked with the
     database's own `to_tsvector('english')`, the script stops if one does);
   - keyword (75): an error code, a file name, a function name or a config key, alone;
   - mixed (75): an identifier plus a paraphrase of what the memory says about it; three
     memories share each paraphrased statement, so only the identifier tells them apart.
   It prints recall@10 and MRR@10 for hybrid recall (with its relevance floor, and asking for
   the nearest anyway: without it), vector-only and full-text-only recall, and with
   --ablation each read-path change of bench/_ranking_variants.py alone (hybrid, through
   search()).
2. Latency. It loads 100,000 more memories (a third in a scope the bench user cannot read, 300
   long ones with window embeddings), then prints p50/p95 of recall and build_context with the
   query embedding and without it (embeddings computed beforehand), the embedding alone, a
   briefing, and a trivial `SELECT 1` in the same process as a baseline for the machine.

Runs in a throwaway database (`bench_recall`) of the embedded server, never on the dev data.
Embeddings of the 100,000 texts are computed once and cached under bench/.cache/ (git-ignored);
the first run spends most of its time there. Prints figures; never fails on a threshold.

This module parses the options and prints the report; bench/_recall_data.py generates the texts
(with bench/recall_pairs.json and bench/_recall_vocabulary.py), bench/_recall_load.py loads them
and bench/_recall_score.py measures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np
from _django import describe, percentile, setup, throwaway_database
from _recall_data import SEED, STATEMENTS, bulk_texts, labelled_set
from _recall_load import create_search_indexes, drop_search_indexes, embed_cached, load
from _recall_score import (
    NEAREST,
    explain_recall,
    no_shared_lexemes,
    print_quality,
    quality,
    timed,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="latency passes over the queries")
    parser.add_argument("--skip-load", action="store_true", help="quality only")
    parser.add_argument("--plan", action="store_true", help="print the full EXPLAIN ANALYZE")
    parser.add_argument(
        "--ablation", action="store_true", help="also each read-path change alone (hybrid)"
    )
    args = parser.parse_args()
    setup()

    from django.contrib.auth import get_user_model
    from django.db import connection

    from memories import embeddings
    from memories.recall.context import briefing, build_context
    from memories.recall.recall import recall
    from scopes.models import ScopeKind
    from scopes.services import scope_create
    from zeromemory.core.actor import Actor

    items, queries = labelled_set()
    rng = random.Random(SEED + 2)
    with throwaway_database("bench_recall"):
        clashes = no_shared_lexemes(
            [(items[q.relevant].content, q.text) for q in queries if q.type == "paraphrase"]
        )
        clashes += no_shared_lexemes(STATEMENTS)
        if clashes:
            for memory, query, shared in clashes:
                print(f"shared lexemes {shared}: {memory!r} / {query!r}")
            raise SystemExit("a paraphrase shares words with its memory; fix the labelled set")
        users = get_user_model().objects
        user = users.create_user("bench", password="bench-password-1")
        other = users.create_user("other", password="bench-password-1")
        scopes = {
            "personal": user.owned_scopes.get(kind=ScopeKind.PERSONAL),
            "team": scope_create(actor=Actor(user=user), name="Team", slug="team", kind="team"),
            "foreign": other.owned_scopes.get(kind=ScopeKind.PERSONAL),
        }
        actor = Actor(user=user, client_name="bench")
        print(f"labelled set: {len(items)} memories, {len(queries)} queries", end=" ")
        counts = {t: sum(q.type == t for q in queries) for t in ("paraphrase", "keyword", "mixed")}
        print("(" + ", ".join(f"{n} {t}" for t, n in counts.items()) + ")")
        started = time.perf_counter()
        vectors = np.asarray(embeddings.embed_texts([item.content for item in items]), np.float32)
        print(f"  embedded in {time.perf_counter() - started:.1f} s")
        definitions = drop_search_indexes()
        labelled_ids = load(items, vectors, scopes, [0.0] * len(items))
        create_search_indexes(definitions)

        modes = ("hybrid", NEAREST, "vector", "fulltext")
        results = {mode: quality(actor, queries, labelled_ids, mode) for mode in modes}
        print_quality("quality on the labelled set (1,110 memories):", results)
        if args.ablation:
            from _ranking_variants import variants

            tuned = {
                name: quality(actor, queries, labelled_ids, "hybrid", tuning)
                for name, tuning in variants()
            }
            print_quality("ablation, hybrid, on the labelled set:", tuned)
        feedback(actor, queries, labelled_ids)
        if args.skip_load:
            return

        bulk = bulk_texts(args.memories, {item.content for item in items})
        print(f"loading {len(bulk)} more memories (embeddings cached in bench/.cache/)", flush=True)
        bulk_vectors = embed_cached([item.content for item in bulk], "recall-bulk")
        started = time.perf_counter()
        drop_search_indexes()
        load(bulk, bulk_vectors, scopes, [rng.uniform(0, 1000) for _ in bulk])
        print(f"  copied in {time.perf_counter() - started:.1f} s", end="; ")
        print(f"indexes rebuilt in {create_search_indexes(definitions):.1f} s")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), count(*) FILTER (WHERE scope_id <> %s) FROM memories_memory",
                [scopes["foreign"].id],
            )
            total, readable = cursor.fetchone()
            cursor.execute("SELECT count(*) FROM memories_memorywindow")
            windows = cursor.fetchone()[0]
        print(f"  {total} memories ({readable} readable by the bench user), {windows} windows")

        results = {mode: quality(actor, queries, labelled_ids, mode) for mode in modes}
        print_quality(f"quality on the labelled set among all {total} memories:", results)

        plan = explain_recall(actor, queries[0].text)
        # The search copy's indexes are its partitions' (memories_memorysearch_N_..._idx).
        uses = {
            name: name in plan
            for name in ("_embedding_idx", "window_embedding_hnsw", "_search_vector_idx")
        }
        print(
            "plan at full size: "
            + ", ".join(f"{k} {'used' if v else 'NOT used'}" for k, v in uses.items())
        )
        if args.plan:
            print(plan)

        texts = [q.text for q in queries]
        rng.shuffle(texts)
        for text in texts[:20]:  # warm up: model, plans, buffers
            recall(actor=actor, query=text)
            build_context(actor=actor, topic=text)

        def trivial(_):
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()

        baseline = timed(trivial, list(range(500)), 1)
        embed = timed(embeddings.embed_query, texts, 1)
        with_embedding = timed(lambda t: recall(actor=actor, query=t), texts, args.rounds)
        context_with = timed(lambda t: build_context(actor=actor, topic=t), texts, 1)

        cached = {text: embeddings.embed_query(text) for text in texts}
        real_embed_query = embeddings.embed_query
        embeddings.embed_query = cached.__getitem__
        try:
            without_embedding = timed(lambda t: recall(actor=actor, query=t), texts, args.rounds)
            context_without = timed(lambda t: build_context(actor=actor, topic=t), texts, 1)
        finally:
            embeddings.embed_query = real_embed_query
        briefings = timed(lambda _: briefing(actor=actor), list(range(50)), 1)

        print(f"latency at {total} memories ({len(texts)} queries; k=10, max_tokens=2000):")
        print(f"  recall, with the query embedding     {describe(with_embedding)}")
        print(f"  recall, embedding computed before    {describe(without_embedding)}")
        print(f"  build_context, with the embedding    {describe(context_with)}")
        print(f"  build_context, embedding before      {describe(context_without)}")
        print(f"  query embedding alone                {describe(embed)}")
        print(f"  briefing (no topic)                  {describe(briefings)}")
        print(f"  baseline SELECT 1                    {describe(baseline)}")
        base = statistics.median(baseline)
        print(
            "  p50 / baseline p50: "
            f"recall {statistics.median(with_embedding) / base:.0f}x, "
            f"build_context {statistics.median(context_with) / base:.0f}x"
        )
        targets = (
            percentile(with_embedding, 95) <= 50,
            percentile(context_with, 95) <= 100,
        )
        print(
            f"  targets (p95 recall <= 50 ms, build_context <= 100 ms, with embedding): "
            f"{'met' if all(targets) else 'NOT met'}"
        )


def feedback(actor, queries, labelled_ids) -> None:
    """Hybrid quality before and after agents report the memories that answered half the queries
    (bench/_feedback.py), each query a conversation of its own."""
    from _feedback import clear_usage, reported_and_held_out

    from memories.feedback import mark_used
    from memories.recall.recall import recall

    reported, held_out = reported_and_held_out(queries)
    halves = {
        "reported": [queries[i] for i in reported],
        "held out": [queries[i] for i in held_out],
    }
    before = {name: quality(actor, half, labelled_ids, "hybrid") for name, half in halves.items()}
    marked = 0
    for i in reported:
        target = labelled_ids[queries[i].relevant]
        if target in {hit.id for hit in recall(actor=actor, query=queries[i].text, k=10)}:
            mark_used(actor=actor, memory_ids=[target], conversation_id=f"bench-{i}")
            marked += 1
    after = {name: quality(actor, half, labelled_ids, "hybrid") for name, half in halves.items()}
    rows = {}
    for name in halves:
        rows[f"{name}, before"] = before[name]
        rows[f"{name}, after"] = after[name]
    print_quality(
        f"usage feedback (mark_used of {marked} found memories, one conversation each):", rows
    )
    clear_usage()


if __name__ == "__main__":
    main()
