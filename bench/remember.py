"""Remember throughput on the embedded database, through the REST API (Django's test client).

    .venv/bin/python bench/remember.py [--single N] [--batches N]

Prints memories per second and p50/p95 latency for single requests and for the batch endpoint,
the share of that time spent computing embeddings, and a baseline (GET /api/v1/me) measured in
the same process. Runs on a throwaway database, never on the dev data.
"""

from __future__ import annotations

import argparse
import random
import time

from _django import describe, setup, throwaway_database

SERVICES = ["billing", "search", "auth", "ingest", "export", "notifier", "gateway", "scheduler"]
THINGS = ["timeouts", "feature flags", "retry limits", "cache keys", "queue names", "API keys path"]
VERBS = ["reads", "writes", "rotates", "validates", "caches", "logs"]
ERRORS = ["ECONNRESET", "HTTP 503", "deadlock detected", "ETIMEDOUT", "HTTP 429", "OOMKilled"]
KINDS = ["fact", "decision", "convention", "gotcha", "preference", "reference"]


def sentence(rng: random.Random, n: int) -> str:
    service, thing = rng.choice(SERVICES), rng.choice(THINGS)
    return (
        f"The {service} service {rng.choice(VERBS)} its {thing} from "
        f"config/{service}/{n}.yaml and retries {rng.randint(2, 9)} times on "
        f"{rng.choice(ERRORS)} (item {n})."
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--single", type=int, default=300)
    parser.add_argument("--batches", type=int, default=10)
    args = parser.parse_args()
    setup()

    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    import memories.embeddings as embeddings
    from scopes.services import token_create
    from zeromemory.core.actor import Actor

    embedded_seconds = [0.0]
    original = embeddings.embed_texts

    def timed_embed(texts):
        started = time.perf_counter()
        try:
            return original(texts)
        finally:
            embedded_seconds[0] += time.perf_counter() - started

    embeddings.embed_texts = timed_embed

    with throwaway_database("bench_remember"):
        user = get_user_model().objects.create_user("bench", password="bench-password-1")
        client = APIClient()
        secret = token_create(actor=Actor(user=user), name="bench").secret
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        rng = random.Random(7)
        embeddings.get_model()
        for i in range(20):  # warm up: model, connections, caches
            client.post(
                "/api/v1/memories", {"content": sentence(rng, -i), "kind": "fact"}, format="json"
            )
            client.get("/api/v1/me")

        baseline = []
        for _ in range(200):
            started = time.perf_counter()
            client.get("/api/v1/me")
            baseline.append((time.perf_counter() - started) * 1000)

        latencies = []
        embedded_seconds[0] = 0.0
        started_all = time.perf_counter()
        for i in range(args.single):
            body = {"content": sentence(rng, i), "kind": rng.choice(KINDS)}
            started = time.perf_counter()
            response = client.post("/api/v1/memories", body, format="json")
            latencies.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 201, response.content
        single_total = time.perf_counter() - started_all
        single_embed = embedded_seconds[0]

        batch_latencies = []
        embedded_seconds[0] = 0.0
        started_all = time.perf_counter()
        for b in range(args.batches):
            items = [
                {"content": sentence(rng, 100_000 + b * 100 + i), "kind": rng.choice(KINDS)}
                for i in range(100)
            ]
            started = time.perf_counter()
            response = client.post("/api/v1/memories/batch", {"items": items}, format="json")
            batch_latencies.append((time.perf_counter() - started) * 1000)
            statuses = {item["status"] for item in response.json()["results"]}
            assert statuses == {201}, statuses
        batch_total = time.perf_counter() - started_all
        batch_embed = embedded_seconds[0]

    n_batch = args.batches * 100
    print("remember benchmark (embedded PostgreSQL, REST API through Django's test client)")
    print(f"  baseline GET /api/v1/me        {describe(baseline)}")
    print(
        f"  single POST /api/v1/memories   {describe(latencies)}   "
        f"{args.single / single_total:6.1f} memories/s   "
        f"embedding {100 * single_embed / single_total:4.1f}% of the time   "
        f"p50 = {sorted(latencies)[len(latencies) // 2] / sorted(baseline)[len(baseline) // 2]:.1f}"
        "x baseline"
    )
    print(
        f"  batch of 100 /memories/batch   {describe(batch_latencies)}   "
        f"{n_batch / batch_total:6.1f} memories/s   "
        f"embedding {100 * batch_embed / batch_total:4.1f}% of the time"
    )


if __name__ == "__main__":
    main()
