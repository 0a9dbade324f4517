"""Noisy neighbours: one user's recall while another user's large batches are embedded, over
real HTTP against a server started as `make run` starts it (its own data directory and port).

    .venv/bin/python bench/neighbours.py [--recalls 100] [--writers 2] [--items 60] [--chars 16000]

One web process (ZM_WEB_PROCESSES=1, unless set otherwise in the environment), so the recalls
and the batches share it, as they do whenever a batch lands on the process serving a recall.

1. the quiet user's `POST /api/v1/recall` alone (the baseline, same run);
2. recalls one after another for as long as `--writers` threads of another user post
   `--batches` `POST /api/v1/memories/batch` each, of `--items` memories of `--chars` characters
   (each long memory is embedded as about 80 windows too).

Prints p50 / p95 of both and their ratio, and how long each batch took. Nothing fails on a
threshold.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import statistics
import string
import tempfile
import threading
import time
from pathlib import Path

from _django import describe, percentile, setup_for
from _server import Api, served
from _serving_data import load, user_with_token


def long_text(chars: int, rng: random.Random) -> str:
    """Made-up words of 3 to 9 letters: unlike each other (no duplicates to absorb), and many
    tokens each, so a memory of 16,000 characters is about 80 windows."""
    text = ""
    while len(text) < chars:
        text += "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) + " "
    return text[:chars]


def recalls(api: Api, scope: str, questions: list[str], count: int, while_=None) -> list[float]:
    """`count` recalls, or as many as fit while `while_()` holds."""
    latencies = []
    for number in itertools.count():
        if (while_ is None and number == count) or (while_ is not None and not while_()):
            break
        body = {"query": questions[number % len(questions)], "scopes": [scope], "k": 10}
        started = time.perf_counter()
        status, answer = api.call("POST", "/api/v1/recall", body)
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200, answer
    return latencies


def write(port: int, token: str, scope: str, args, took: list):
    api = Api(port, token)
    rng = random.Random()
    for _ in range(args.batches):
        items = [
            {"content": long_text(args.chars, rng), "kind": "fact", "scope": scope}
            for _ in range(args.items)
        ]
        started = time.perf_counter()
        status, answer = api.call("POST", "/api/v1/memories/batch", {"items": items})
        took.append(time.perf_counter() - started)
        assert status == 200, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recalls", type=int, default=100)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--batches", type=int, default=1, help="batches per writer")
    parser.add_argument("--chars", type=int, default=16_000)
    args = parser.parse_args()

    os.environ.setdefault("ZM_WEB_PROCESSES", "1")
    data_dir = Path(tempfile.mkdtemp(prefix="zm-neighbours-"))
    try:
        with served(data_dir) as port:
            setup_for(data_dir)
            state = load(port, 1000, 1)  # 1,000 chat turns in one scope, and a scope for writes
            quiet = Api(port, state["token"])
            scope, questions = state["scopes"][0], state["questions"][0]
            heavy = user_with_token("heavy")
            _, created = Api(port, heavy).call(
                "POST", "/api/v1/scopes", {"name": "Heavy", "slug": "heavy", "kind": "project"}
            )
            recalls(quiet, scope, questions, 20)  # warm up
            alone = recalls(quiet, scope, questions, args.recalls)

            took: list[float] = []
            writers = [
                threading.Thread(target=write, args=(port, heavy, created["id"], args, took))
                for _ in range(args.writers)
            ]
            for writer in writers:
                writer.start()
            beside = recalls(
                quiet, scope, questions, 0, while_=lambda: any(w.is_alive() for w in writers)
            )
            for writer in writers:
                writer.join()

            print("recalls of one user, 1,000 memories in its scope")
            print(f"  alone                     {describe(alone)}   max {max(alone):8.2f} ms")
            label = f"beside {args.writers} batch writers"
            print(
                f"  {label:<26}{describe(beside)}   max {max(beside):8.2f} ms   "
                f"({len(beside)} recalls)"
            )
            p50 = statistics.median(beside) / statistics.median(alone)
            p95 = percentile(beside, 95) / percentile(alone, 95)
            print(f"  ratio beside / alone: p50 {p50:.1f}x, p95 {p95:.1f}x")
            print(
                f"  batches of {args.items} x {args.chars} characters: {len(took)} written, "
                f"median {statistics.median(took):.1f} s each"
            )
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
