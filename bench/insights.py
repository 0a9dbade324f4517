"""GET /api/v1/insights over HTTP from a real server, at a thousand and at a million activity
rows, beside an empty HTTP server of the standard library (what HTTP alone costs here).

    .venv/bin/python bench/insights.py [--rows 1000000] [--scopes 20] [--requests 200]

Starts `manage.py serve` as `make run` does, on a fresh data directory (removed afterwards);
seeds 1,000 activity rows over the last 90 days with COPY, folds them into the daily rows
(the scheduled task's work, timed), measures the answer for 7, 30 and 90 days; then adds rows
up to --rows, folds and measures again. Each request is one at a time over one keep-alive
connection; p50 and p95 in milliseconds. The answer reads the daily rows, never the activity
log, so its cost should not follow the log's size.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _django import percentile, setup_for
from _server import Api, free_port, served, start_baseline
from _serving_data import user_with_token

OPERATIONS = ["recall"] * 6 + ["build_context"] * 3 + ["briefing"]
CLIENTS = ["claude-code", "codex", "cursor", "watcher"]
COLUMNS = (
    "public_id", "surface", "user_id", "client_name", "operation", "scopes", "query", "options",
    "results", "latency_ms", "outcome", "error_code", "pending_recalls", "created_at",
    "conversation_id", "tokens",
)  # fmt: skip


def seed_scopes(count: int) -> tuple[object, list[tuple[str, list[str]]]]:
    """The bench user's scopes, each with 50 memories (no embeddings: nothing reads vectors)."""
    from django.contrib.auth import get_user_model

    from memories.canonical.content import content_hash
    from memories.models import Memory
    from scopes.services import scope_create
    from zeromemory.core.actor import Actor

    user = get_user_model().objects.get(username="bench")
    scopes = []
    for number in range(count):
        scope = scope_create(
            actor=Actor(user=user), name=f"I{number}", slug=f"i{number}", kind="team"
        )
        texts = [f"Insights bench memory {n} of scope {number}." for n in range(50)]
        rows = Memory.objects.bulk_create(
            [Memory(scope=scope, kind_id="fact", content=t, content_hash=content_hash(t),
                    author_kind="agent") for t in texts]
        )  # fmt: skip
        scopes.append((scope.public_id, [row.public_id for row in rows]))
    return user, scopes


def copy_activity(user, scopes, count: int, rng: random.Random) -> float:
    """`count` activity rows spread over the last 90 days, with COPY; returns seconds."""
    from django.db import connection

    from zeromemory.core.ids import new_public_id

    now = datetime.now(UTC)
    started = time.perf_counter()
    sql = f"COPY memories_activitylog ({', '.join(COLUMNS)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for n in range(count):
            scope_id, memories = scopes[n % len(scopes)]
            hit = rng.random() > 0.15
            results = (
                [{"id": rng.choice(memories), "score": 0.5} for _ in range(rng.randint(1, 5))]
                if hit
                else []
            )
            copy.write_row((
                new_public_id("act"), "mcp", user.pk, rng.choice(CLIENTS),
                rng.choice(OPERATIONS), json.dumps([scope_id]), f"question {n}", "{}",
                json.dumps(results), 3.0, "hit" if hit else "empty", "", "{}",
                now - timedelta(seconds=rng.uniform(0, 90 * 86400)),
                f"conv-{n % 5000}", 40 * len(results),
            ))  # fmt: skip
    return time.perf_counter() - started


def fold_all() -> float:
    from memories.insights.fold import insights_fold

    started = time.perf_counter()
    insights_fold(days=90)
    return time.perf_counter() - started


def timed(api: Api, path: str, requests: int) -> list[float]:
    for _ in range(10):
        status, body = api.call("GET", path)
        assert status == 200, (status, body)
    latencies = []
    for _ in range(requests):
        started = time.perf_counter()
        status, body = api.call("GET", path)
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200, (status, body)
    return latencies


def line(name: str, values: list[float], baseline: float) -> str:
    p50, p95 = statistics.median(values), percentile(values, 95)
    return f"  {name:44s} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   {p50 / baseline:5.1f}x"


def measure(api: Api, scope: str, requests: int, baseline: float) -> None:
    for days in (7, 30, 90):
        path = f"/api/v1/insights?scope={scope}&days={days}"
        print(line(f"GET /api/v1/insights, {days} days", timed(api, path, requests), baseline))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--scopes", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="zm-insights-"))
    rng = random.Random(29)
    baseline_port = free_port()
    baseline_server = start_baseline(baseline_port)
    try:
        with served(data_dir) as port:
            setup_for(data_dir)
            token = user_with_token("bench")
            user, scopes = seed_scopes(args.scopes)
            api, empty = Api(port, token), Api(baseline_port)
            base = timed(empty, "/healthz", args.requests)
            baseline = statistics.median(base)
            print(line("empty stdlib server, GET", base, baseline))
            print(line("GET /api/v1/me", timed(api, "/api/v1/me", args.requests), baseline))
            done = 0
            for total in (1000, args.rows):
                added = total - done
                seconds = copy_activity(user, scopes, added, rng)
                done = total
                print(
                    f"{total:,} activity rows in {args.scopes} scopes over 90 days "
                    f"(COPY of {added:,} in {seconds:.1f} s); "
                    f"fold of 90 days: {fold_all():.1f} s"
                )
                measure(api, scopes[0][0], args.requests, baseline)
    finally:
        baseline_server.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
