"""Hygiene figures: the decision rules on a labelled set, and the scan over 100,000 memories.

    .venv/bin/python bench/hygiene.py [--memories 100000] [--scopes 20] [--skip-labelled]
        [--skip-scan] [--skip-volume] [--turns 5000]

1. A generated labelled set (bench/_hygiene_labelled.py: 300 pairs, 60 each of duplicates in
   other words, supersessions, contradictions, complementary and unrelated pairs, across kinds
   and authors), each pair in a scope of its own, written through remember() (real embeddings).
   The scan runs over it (how many labelled pairs it proposes, by label), then every pair is
   judged through the real SDK against the suite's fake Messages API, which answers the
   scripted verdict (right nine times in ten); each outcome is checked against the rules as the
   issue states them, written out independently of memories/hygiene/auto_resolution.py.
2. The scan over --memories memories in --scopes scopes with synthetic embeddings (clustered
   random unit vectors: groups of 1 to 4 near neighbours, inserted with bulk_create; real
   embeddings of 100,000 texts take too long on this CPU), no API key, so the judge is
   excluded: the first scan (every memory a subject: the exact path), candidate pairs found per
   minute, its time and its recall of the pairs whose cosine is at least 0.78; a rescan; then
   1,000 new memories scanned against the whole store through the HNSW index.

3. Judge calls per 1,000 new memories on chat-like data (--turns chat turns in 5 scopes, and a
   fifth as many near-identical short facts in one more scope, embedded for real): before (one
   call per candidate pair) and after (pairs of the same text once normalized need no call;
   up to ZM_HYGIENE_PAIRS_PER_CALL pairs of one scope share a call), counted at the fake API.

Runs on throwaway databases of the embedded server; prints figures and never fails.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections import Counter

import numpy as np
from _django import setup, throwaway_database
from _hygiene_labelled import labelled_pairs
from _hygiene_volume import judge_volume

DIM = 384


def labelled(fake) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from memories.hygiene import scan, service
    from memories.models import Conflict, ConflictStatus, Memory
    from memories.services.remember import RememberInput, memory_remember
    from scopes.services import scope_create
    from tests.fakes.anthropic_api import malformed_tool_input
    from zeromemory.core.actor import Actor, Surface

    settings.ANTHROPIC_API_KEY = ""
    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    pairs = labelled_pairs()
    written = []
    started = time.perf_counter()
    for number, pair in enumerate(pairs):
        scope = scope_create(
            actor=Actor(user=user), name=f"S{number}", slug=f"s{number}", kind="team"
        )

        def write(content, kind, author, scope=scope):
            surface = Surface.CAPTURE if author == "capture" else Surface.API
            request = RememberInput(
                content=content, kind=kind, scope=scope.public_id, author_kind=author
            )
            return memory_remember(actor=Actor(user=user, surface=surface), request=request).memory

        written.append(
            (write(pair.a, pair.kind_a, pair.author_a), write(pair.b, pair.kind_b, pair.author_b))
        )
    print(f"labelled set: {len(pairs)} pairs written in {time.perf_counter() - started:.1f} s")
    by_label = Counter(pair.label for pair in pairs)

    record = scan.hygiene_scan()
    found = set(Conflict.objects.values_list("memory_a_id", "memory_b_id"))
    proposed = Counter(
        pair.label for pair, (a, b) in zip(pairs, written, strict=True) if (a.pk, b.pk) in found
    )
    print(f"  scan: {record.subjects} subjects, {record.pairs_found} candidate pairs")
    for label, total in by_label.items():
        print(f"    {label:16} proposed {proposed[label]:3} of {total}")

    settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL = "bench-key", fake.url
    memories_before = Memory.objects.count()
    outcomes, agree, wrong_retirements = Counter(), 0, 0
    for pair, (a, b) in zip(pairs, written, strict=True):
        conflict, _ = Conflict.objects.get_or_create(
            memory_a=a, memory_b=b, defaults={"scope": a.scope}
        )
        conflict.status = ConflictStatus.PENDING
        claim = service.JUDGING.new_claim(conflict)
        conflict.save(update_fields=["status", "claim", "lease_until"])
        answer = {"relation": pair.verdict, "confidence": pair.confidence, "rationale": "scripted"}
        fake.script(malformed_tool_input({"relations": [{"pair": 1, **answer}]}))
        service.conflict_judge(conflict_id=conflict.id, claim=claim)
        conflict.refresh_from_db()
        a.refresh_from_db()
        b.refresh_from_db()
        retired = "a" if not a.valid else "b" if not b.valid else None
        outcome = (conflict.status, retired)
        outcomes[conflict.status] += 1
        agree += outcome == pair.expected()
        if retired and pair.label not in ("duplicate", "b_supersedes_a"):
            wrong_retirements += 1
    right = sum(pair.verdict == pair.label for pair in pairs)
    print(
        f"  judged {len(pairs)} pairs (scripted judge right on {right}): "
        + ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items()))
    )
    print(f"  outcomes as the rules demand: {agree} of {len(pairs)}")
    print(f"  memories retired automatically where the label says no: {wrong_retirements}")
    print(f"  memories deleted: {memories_before - Memory.objects.count()}")


def clustered(n: int, scopes: int, rng: np.random.Generator) -> tuple[list, list, list]:
    """n unit vectors in groups of 1–4 near neighbours; (vectors, scope index, group id)."""
    vectors, scope_of, group_of = [], [], []
    group = 0
    while len(vectors) < n:
        size = int(rng.choice([1, 1, 1, 1, 1, 2, 2, 2, 3, 4]))
        sigma = rng.uniform(0.25, 0.75)
        center = rng.standard_normal(DIM)
        center /= np.linalg.norm(center)
        scope = int(rng.integers(scopes))
        for _ in range(min(size, n - len(vectors))):
            member = center + sigma * rng.standard_normal(DIM) / np.sqrt(DIM)
            vectors.append(member / np.linalg.norm(member))
            scope_of.append(scope)
            group_of.append(group)
        group += 1
    return vectors, scope_of, group_of


def scan_bench(n: int, scopes: int) -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection

    from memories.canonical.content import content_hash
    from memories.hygiene import scan
    from memories.models import Conflict, Memory
    from scopes.services import scope_create
    from zeromemory.core.actor import Actor

    settings.ANTHROPIC_API_KEY = ""  # the judge is excluded: pairs queue, waiting for a key
    user = get_user_model().objects.create_user("scan", password="bench-password-1")
    scope_ids = [
        scope_create(actor=Actor(user=user), name=f"T{i}", slug=f"t{i}", kind="team").id
        for i in range(scopes)
    ]
    vectors, scope_of, group_of = clustered(n, scopes, np.random.default_rng(5))
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX memorysearch_embedding_hnsw")
    batch = []
    for i, vector in enumerate(vectors):
        text = f"Synthetic memory {i} of group {group_of[i]}."
        batch.append(
            Memory(scope_id=scope_ids[scope_of[i]], kind_id="fact", content=text,
                   content_hash=content_hash(text), author_kind="agent", embedding=vector)
        )  # fmt: skip
        if len(batch) == 5000:
            Memory.objects.bulk_create(batch)
            batch = []
    Memory.objects.bulk_create(batch)
    inserted = time.perf_counter() - started
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            "CREATE INDEX memorysearch_embedding_hnsw ON memories_memorysearch USING hnsw "
            "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )
    print(
        f"scan: {n} memories in {scopes} scopes inserted in {inserted:.1f} s, "
        f"HNSW index built in {time.perf_counter() - started:.1f} s"
    )

    started = time.perf_counter()
    record = scan.hygiene_scan()
    seconds = time.perf_counter() - started
    print(
        f"  first scan: {record.subjects} subjects, {record.pairs_found} candidate pairs "
        f"({record.pairs_new} new) in {seconds:.1f} s: "
        f"{record.pairs_found / seconds * 60:,.0f} pairs/min, "
        f"{record.subjects / seconds:,.0f} subjects/s"
    )
    truth = exact_pairs(vectors, scope_of, group_of)
    position = {
        pk: i for i, pk in enumerate(Memory.objects.order_by("id").values_list("id", flat=True))
    }
    found = {
        tuple(sorted((position[a], position[b])))
        for a, b in Conflict.objects.values_list("memory_a_id", "memory_b_id")
    }
    print(
        f"  exact pairs at cosine >= 0.78 within a group: {len(truth)}; found {len(truth & found)} "
        f"({len(truth & found) / max(1, len(truth)):.1%}); pairs across groups: "
        f"{sum(group_of[a] != group_of[b] for a, b in found)}"
    )
    started = time.perf_counter()
    again = scan.hygiene_scan()
    print(
        f"  rescan with nothing changed: {again.subjects} subjects "
        f"in {time.perf_counter() - started:.2f} s"
    )
    incremental(vectors, scope_ids, scope_of)


def incremental(vectors, scope_ids, scope_of, n: int = 1000) -> None:
    """The usual scan: n new memories (half near an existing one) against the whole store,
    through the HNSW index."""
    from memories.canonical.content import content_hash
    from memories.hygiene import scan
    from memories.models import Memory

    rng = np.random.default_rng(11)
    new = []
    for i in range(n):
        if i % 2:
            vector = rng.standard_normal(DIM)
            scope = int(rng.integers(len(scope_ids)))
        else:
            twin = int(rng.integers(len(vectors)))
            vector = vectors[twin] + 0.3 * rng.standard_normal(DIM) / np.sqrt(DIM)
            scope = scope_of[twin]
        text = f"Synthetic new memory {i}."
        new.append(
            Memory(scope_id=scope_ids[scope], kind_id="fact", content=text,
                   content_hash=content_hash(text), author_kind="agent",
                   embedding=vector / np.linalg.norm(vector))
        )  # fmt: skip
    Memory.objects.bulk_create(new)
    started = time.perf_counter()
    record = scan.hygiene_scan()
    seconds = time.perf_counter() - started
    print(
        f"  incremental scan (HNSW): {record.subjects} new memories against {len(vectors):,}: "
        f"{record.pairs_found} pairs in {seconds:.1f} s ({seconds / record.subjects * 1000:.1f} ms "
        f"a subject, {record.pairs_found / seconds * 60:,.0f} pairs/min)"
    )


def exact_pairs(vectors, scope_of, group_of) -> set[tuple[int, int]]:
    members: dict[int, list[int]] = {}
    for index, group in enumerate(group_of):
        members.setdefault(group, []).append(index)
    pairs = set()
    for indices in members.values():
        for i, a in enumerate(indices):
            for b in indices[i + 1 :]:
                if float(np.dot(vectors[a], vectors[b])) >= 0.78:
                    pairs.add((a, b))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--scopes", type=int, default=20)
    parser.add_argument("--skip-labelled", action="store_true")
    parser.add_argument("--skip-scan", action="store_true", help="skip the 100,000-memory scan")
    parser.add_argument("--skip-volume", action="store_true", help="skip the judge volume")
    parser.add_argument("--turns", type=int, default=5000, help="chat turns of the volume part")
    args = parser.parse_args()
    setup()
    random.seed(3)
    if not (args.skip_labelled and args.skip_volume):
        from tests.fakes.anthropic_api import FakeAnthropicAPI

        os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

        fake = FakeAnthropicAPI().start()
        try:
            if not args.skip_labelled:
                with throwaway_database("bench_hygiene"):
                    labelled(fake)
            if not args.skip_volume:
                with throwaway_database(f"bench_hygiene_volume_{args.turns}"):
                    judge_volume(fake, args.turns, 5)
        finally:
            fake.stop()
    if not args.skip_scan:
        with throwaway_database("bench_hygiene_scan"):
            scan_bench(args.memories, args.scopes)


if __name__ == "__main__":
    main()
