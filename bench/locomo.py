"""Recall on LoCoMo conversations through the REST API of a real server, beside three anchors.

    .venv/bin/python bench/locomo.py [PATH] [--fresh] [--ablation] [--rounds 1]

PATH is a LoCoMo-format file (default ../shared/locomo/locomo-dev.json beside the repository;
the data is never part of the repository). Every turn is remembered as "<speaker>: <text>", kind
`episode`, one scope per conversation, each LoCoMo session as the turn's `conversation_id` (as the
watcher sends a transcript's session), through `POST /api/v1/memories/batch` of a server started
as `make run` starts it (`manage.py serve`, web and worker) with its own ZM_DATA_DIR on a free
port. Each question of categories 1-4 is then a `POST /api/v1/recall` with k = 10 in its
conversation's scope, over one keep-alive HTTP connection. recall@k is the share of the
question's evidence turns among the hits, MRR 1 / rank of the first evidence turn (0 past 10).
Then each question is a `POST /api/v1/context` at the default budget: the share of evidence turns
in its relevant section (the same recall, up to 20 rows at 2,000 tokens).

The anchors run in the same run, on the same database and embedder, computed by this process
directly in SQL against the server's database (the query embedded here with the same model):
pgvector cosine only (HNSW, the server's `ef_search` and iterative scan), PostgreSQL full text
with any term of the query matching, ranked by ts_rank_cd, and naive RRF of those two (k = 60,
40 candidates per leg).

`--ablation` also runs the read path's changes (bench/_ranking_variants.py) in this
process, through the same search function the server calls, on the same database: each change
alone and all together, and the product without the steps after the statement (the
same-conversation lift, the relevance floor). bench/relevance.py measures the floor itself.
Those rows are a diagnosis; the headline is the REST row.

The loaded data directory is kept under bench/.cache/ (git-ignored) and reused; `--fresh`
loads into a new temporary one (the figures in docs/benchmarks.md come from a fresh run).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path

from _django import ROOT, percentile, setup_for
from _feedback import clear_usage, reported_and_held_out
from _locomo import (
    CATEGORIES,
    Question,
    Scores,
    anchor_ranks,
    evidence_share,
    load_conversations,
    print_table,
    score,
)
from _server import Api, served

DEFAULT_DATA = ROOT.parent / "shared" / "locomo" / "locomo-dev.json"
CACHE = ROOT / "bench" / ".cache"
BATCH = 100


def issue_token() -> str:
    from django.contrib.auth import get_user_model

    from scopes.services import token_create
    from zeromemory.core.actor import Actor

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    return token_create(actor=Actor(user=user), name="locomo-bench").secret


def load(api: Api, conversations) -> dict:
    """Remember every turn through the batch endpoint; the ids the bench needs to score."""
    loaded: dict[str, dict] = {}
    for conversation in conversations:
        status, scope = api.call(
            "POST",
            "/api/v1/scopes",
            {"name": conversation.id, "slug": conversation.id.lower(), "kind": "project"},
        )
        assert status == 201, scope
        memory_of: dict[str, str] = {}
        turns = conversation.turns
        for start in range(0, len(turns), BATCH):
            chunk = turns[start : start + BATCH]
            # Each LoCoMo session is one conversation, as a watcher sends a transcript's.
            items = [
                {
                    "content": text,
                    "kind": "episode",
                    "scope": scope["id"],
                    "conversation_id": conversation.conversation_id(dia_id),
                }
                for dia_id, text in chunk
            ]
            status, answer = api.call("POST", "/api/v1/memories/batch", {"items": items})
            assert status == 200, answer
            for (dia_id, _), result in zip(chunk, answer["results"], strict=True):
                assert result["status"] in (200, 201), result
                memory_of[dia_id] = result["memory"]["id"]
        loaded[conversation.id] = {"scope": scope["id"], "memory_of": memory_of}
        print(f"  {conversation.id}: {len(turns)} turns", flush=True)
    return loaded


def analyze() -> None:
    """What autovacuum does soon after a load anyway: without statistics the planner may pick
    another plan for the first minutes (an approximate HNSW scan or an exact sort), and the
    figures would depend on how fast the bench follows the load."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories_memory")
        cursor.execute("VACUUM ANALYZE memories_memorywindow")


def recall_over_http(api: Api, questions: list[Question], loaded: dict, rounds: int):
    ranked: list[list[str]] = []
    latencies: list[float] = []
    for round_number in range(rounds):
        for question in questions:
            body = {"query": question.text, "scopes": [loaded[question.conversation]["scope"]]}
            started = time.perf_counter()
            status, answer = api.call("POST", "/api/v1/recall", {**body, "k": 10})
            latencies.append((time.perf_counter() - started) * 1000)
            assert status == 200, answer
            if round_number == 0:
                ranked.append([hit["id"] for hit in answer["results"]])
    return ranked, latencies


def context_over_http(api: Api, questions: list[Question], loaded: dict):
    """build_context at its default budget: the ids of its relevant section, and latencies."""
    sections: list[list[str]] = []
    latencies: list[float] = []
    for question in questions:
        body = {"topic": question.text, "scopes": [loaded[question.conversation]["scope"]]}
        started = time.perf_counter()
        status, answer = api.call("POST", "/api/v1/context", body)
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200, answer
        relevant = next(s for s in answer["sections"] if s["name"] == "relevant")
        sections.append([row["id"] for row in relevant["rows"]])
    return sections, latencies


def feedback_over_http(api: Api, questions: list[Question], loaded: dict, ranked):
    """Agents answer the even-numbered questions and report (`POST /api/v1/memories/used`, one
    conversation each) the evidence turns among their hits; every question is then asked again.
    Scores of both halves before and after (bench/_feedback.py)."""
    reported, held_out = reported_and_held_out(questions)
    marked = 0
    for i in reported:
        question = questions[i]
        memory_of = loaded[question.conversation]["memory_of"]
        evidence = {memory_of[d] for d in question.evidence if d in memory_of}
        used = [hit for hit in ranked[i] if hit in evidence]
        if used:
            body = {"memory_ids": used, "conversation_id": f"locomo-{i}"}
            status, answer = api.call("POST", "/api/v1/memories/used", body)
            assert status == 200, answer
            marked += len(used)
    print(f"  usage feedback: {marked} evidence turns reported for {len(reported)} questions")
    again, _ = recall_over_http(api, questions, loaded, 1)
    rows = {}
    for name, half in (("reported half", reported), ("held-out half", held_out)):
        subset = [questions[i] for i in half]
        rows[f"{name}, before"] = score(subset, [ranked[i] for i in half], loaded)
        rows[f"{name}, after"] = score(subset, [again[i] for i in half], loaded)
    return rows


def ablation(questions: list[Question], loaded: dict) -> dict[str, Scores]:
    from _ranking_variants import variants

    from memories.recall.recall import ScopeSelection, search
    from scopes.models import Scope

    pk_of = dict(Scope.objects.values_list("public_id", "id"))
    rows: dict[str, Scores] = {}
    for name, tuning in variants():
        ranked = []
        for question in questions:
            scope_pk = pk_of[loaded[question.conversation]["scope"]]
            selection = ScopeSelection(ids=(scope_pk,), requested=[])
            hits = search(query=question.text, selection=selection, k=10, tuning=tuning)
            ranked.append([hit.id for hit in hits])
        rows[name] = score(questions, ranked, loaded)
        print(f"  {name}: done", flush=True)
    return rows


def data_dir_for(path: Path, fresh: bool) -> tuple[Path, bool]:
    """The data directory to use, and whether it already holds the loaded conversations."""
    if fresh:
        return Path(tempfile.mkdtemp(prefix="zm-locomo-")), False
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    folder = CACHE / f"locomo-{digest}"
    if (folder / "loaded.json").exists():
        return folder, True
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder, False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--fresh", action="store_true", help="load into a new data directory")
    parser.add_argument("--ablation", action="store_true", help="also the feature ablation")
    parser.add_argument("--rounds", type=int, default=1, help="latency passes over the questions")
    args = parser.parse_args()
    conversations, questions = load_conversations(args.path)
    turns = sum(len(c.turns) for c in conversations)
    print(f"{args.path.name}: {len(conversations)} conversations, {turns} turns, ", end="")
    print(f"{len(questions)} scored questions")

    data_dir, cached = data_dir_for(args.path, args.fresh)
    try:
        with served(data_dir) as port:
            setup_for(data_dir)
            if cached:
                state = json.loads((data_dir / "loaded.json").read_text())
                print("  conversations already loaded (cached data directory)")
            else:
                token = issue_token()
                started = time.perf_counter()
                loaded = load(Api(port, token), conversations)
                print(
                    f"  loaded through the batch endpoint in {time.perf_counter() - started:.1f} s"
                )
                analyze()
                state = {"token": token, "loaded": loaded}
                (data_dir / "loaded.json").write_text(json.dumps(state))
            loaded = state["loaded"]
            api = Api(port, state["token"])
            for question in questions[:20]:  # warm up: model, plans, buffers
                body = {"query": question.text, "scopes": [loaded[question.conversation]["scope"]]}
                api.call("POST", "/api/v1/recall", body)
            clear_usage()
            ranked, latencies = recall_over_http(api, questions, loaded, args.rounds)
            rows = {"zero-memory recall (REST)": score(questions, ranked, loaded)}
            feedback_rows = feedback_over_http(api, questions, loaded, ranked)
            sections, context_latencies = context_over_http(api, questions, loaded)
            anchors = anchor_ranks(questions, loaded)
            for name, anchor_ranked in anchors.items():
                rows[name] = score(questions, anchor_ranked, loaded)
            extra = ablation(questions, loaded) if args.ablation else {}
            print()
            print_table("LoCoMo, k = 10, one scope per conversation", rows)
            print(
                f"recall over HTTP ({len(latencies)} requests): "
                f"p50 {percentile(latencies, 50):.2f} ms, p95 {percentile(latencies, 95):.2f} ms"
            )
            found = evidence_share(questions, sections, loaded)
            shown = sum(map(len, sections)) / len(sections)
            print(
                f"build_context (REST, max_tokens 2000): {found:.3f} of the evidence turns in the "
                f"relevant section ({shown:.1f} rows on average); "
                f"p50 {percentile(context_latencies, 50):.2f} ms, "
                f"p95 {percentile(context_latencies, 95):.2f} ms"
            )
            print()
            print_table("usage feedback (mark_used over REST), same run", feedback_rows)
            if extra:
                print()
                print_table("ablation (in-process, same database and search function)", extra)
            print(f"categories: {', '.join(f'{n} {name}' for n, name in CATEGORIES.items())}")
    finally:
        if args.fresh:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
