"""What users meet: latency and write rates of a real server over HTTP, beside baselines.

    .venv/bin/python bench/serving.py [--memories 10000] [--scopes 1] [--requests 200] [--fresh]

Starts `manage.py serve` as `make run` does (its defaults: web processes, threads, rate limit),
with its own data directory (bench/.cache/serving-<memories>-<scopes>/, kept for the next run)
and port; writes the chat turns through the batch endpoint the first time; then drives it from
this process over one keep-alive connection, one request at a time, and prints p50 / p95 of each
request beside two baselines measured in the same run: an empty HTTP server of the standard
library on the same machine (what HTTP alone costs here), and the same request through Django's
test client inside this process (what the server's own code costs). "Across all scopes" is a
recall without `scopes`: every scope of the user, what an agent gets by default. The `as_of`
rows ask the same recalls as of an instant after the load (every memory valid then, so the rows
differ only by the validity filter and the text-as-of lookup) and print their ratio to the
recall without it.
"""

from __future__ import annotations

import argparse
import itertools
import random
import shutil
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from _chat import conversations, short_memory
from _django import percentile, setup_for
from _server import Api, free_port, served, start_baseline
from _serving_data import data_dir_for, prepared

WARMUP = 10


def timed(call: Callable[[int], tuple[int, dict]], requests: int, ok=(200,)) -> list[float]:
    """Milliseconds of `requests` calls (after a warm-up), each checked for its status."""
    for n in range(WARMUP):
        status, body = call(-1 - n)
        assert status in ok, (status, body)
    latencies = []
    for n in range(requests):
        started = time.perf_counter()
        status, body = call(n)
        latencies.append((time.perf_counter() - started) * 1000)
        assert status in ok, (status, body)
    return latencies


def row(name: str, http: list[float], inproc: list[float] | None, baseline: float) -> str:
    p50, p95 = statistics.median(http), percentile(http, 95)
    local = (
        f"{statistics.median(inproc):8.2f} {percentile(inproc, 95):8.2f}" if inproc else " " * 17
    )
    return f"{name:34s} {p50:8.2f} {p95:8.2f}   {local}   {p50 / baseline:6.1f}x"


class Requests:
    """The requests measured, each a function of its sequence number, for any client."""

    def __init__(self, state: dict, stamp: int) -> None:
        self.state = state
        first = state["questions"][0]
        everywhere = [q for qs in state["questions"] for q in qs]
        random.Random(7).shuffle(everywhere)
        self.one_scope = itertools.cycle(first)
        self.all_scopes = itertools.cycle(everywhere)
        turns, _ = conversations(20_000, 1)
        self.turns = itertools.cycle(turn.content for turn in turns[0])
        self.serials = itertools.count(stamp * 1_000_000)  # new text for every write
        self.as_of = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def recall_one(self, call, n, *, as_of=False):
        body = {"query": next(self.one_scope), "scopes": [self.state["scopes"][0]]}
        return call("POST", "/api/v1/recall", dict(body, as_of=self.as_of) if as_of else body)

    def recall_all(self, call, n, *, as_of=False):
        body = {"query": next(self.all_scopes)}
        return call("POST", "/api/v1/recall", dict(body, as_of=self.as_of) if as_of else body)

    def context(self, call, n):
        return call("POST", "/api/v1/context", {"topic": next(self.all_scopes)})

    def briefing(self, call, n):
        return call("GET", "/api/v1/briefing", None)

    def remember(self, call, n):
        body = {
            "content": short_memory(next(self.serials)),
            "kind": "fact",
            "scope": self.state["writes"],
        }
        return call("POST", "/api/v1/memories", body)

    def batch(self, call, n, *, chat: bool):
        items = []
        for _ in range(100):
            serial = next(self.serials)
            text = f"{next(self.turns)} ({serial})" if chat else short_memory(serial)
            items.append({"content": text, "kind": "episode", "scope": self.state["writes"]})
        return call("POST", "/api/v1/memories/batch", {"items": items})


def in_process(state: dict, requests: Requests, count: int) -> dict[str, list[float]]:
    """The same requests through Django's test client in this process (no HTTP, no server)."""
    from rest_framework.test import APIClient

    client = APIClient(HTTP_HOST="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {state['token']}")

    def call(method: str, path: str, body):
        response = (
            client.get(path, body) if method == "GET" else client.post(path, body, format="json")
        )
        return response.status_code, response.json() if response.content else {}

    return {
        "GET /healthz": timed(lambda n: call("GET", "/healthz", None), count),
        "GET /api/v1/me": timed(lambda n: call("GET", "/api/v1/me", None), count),
        "recall, one scope": timed(lambda n: requests.recall_one(call, n), count),
        "recall, across all scopes": timed(lambda n: requests.recall_all(call, n), count),
        "build_context": timed(lambda n: requests.context(call, n), count),
        "briefing": timed(lambda n: requests.briefing(call, n), count),
        "remember (one memory)": timed(lambda n: requests.remember(call, n), count, ok=(201,)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--scopes", type=int, default=1)
    parser.add_argument("--requests", type=int, default=200, help="per kind of request")
    parser.add_argument("--batches", type=int, default=10, help="batches of 100 per kind")
    parser.add_argument("--fresh", action="store_true", help="a new data directory, then removed")
    parser.add_argument(
        "--copies",
        type=int,
        default=0,
        help="write 1/(copies+1) of the turns over HTTP, copy each that many times in SQL "
        "(text numbered, embedding with noise): a large data set when embedding is slow",
    )
    parser.add_argument("--reads-only", action="store_true", help="skip the write rows")
    args = parser.parse_args()

    data_dir, state = data_dir_for(args.memories, args.scopes, args.fresh, args.copies)
    baseline_port = free_port()
    baseline_server = start_baseline(baseline_port)
    try:
        with served(data_dir, keep_rate_limit=True) as port:
            setup_for(data_dir)
            state = prepared(port, data_dir, state, args.memories, args.scopes, args.copies)
            requests = Requests(state, stamp=int(time.time()) % 100_000)
            api = Api(port, state["token"])
            empty = Api(baseline_port)
            count = args.requests
            base_get = timed(lambda n: empty.call("GET", "/healthz"), count)
            base_post = timed(lambda n: empty.call("POST", "/api/v1/recall", {"query": "x"}), count)
            baseline = statistics.median(base_get)
            http = {
                "GET /healthz": timed(lambda n: api.call("GET", "/healthz"), count),
                "GET /api/v1/me": timed(lambda n: api.call("GET", "/api/v1/me"), count),
                "recall, one scope": timed(lambda n: requests.recall_one(api.call, n), count),
                "recall, across all scopes": timed(
                    lambda n: requests.recall_all(api.call, n), count
                ),
                "recall, one scope, as_of": timed(
                    lambda n: requests.recall_one(api.call, n, as_of=True), count
                ),
                "recall, all scopes, as_of": timed(
                    lambda n: requests.recall_all(api.call, n, as_of=True), count
                ),
                "build_context": timed(lambda n: requests.context(api.call, n), count),
                "briefing": timed(lambda n: requests.briefing(api.call, n), count),
            }
            if not args.reads_only:
                http["remember (one memory)"] = timed(
                    lambda n: requests.remember(api.call, n), count, ok=(201,)
                )
                batch_short = timed(lambda n: requests.batch(api.call, n, chat=False), args.batches)
                batch_chat = timed(lambda n: requests.batch(api.call, n, chat=True), args.batches)
            local = {} if args.reads_only else in_process(state, requests, count)
    finally:
        baseline_server.kill()
        if args.fresh:
            shutil.rmtree(data_dir, ignore_errors=True)

    print()
    print(
        f"{args.memories} memories in {args.scopes} scope(s); {count} requests each, one at a "
        "time over one keep-alive connection"
    )
    if "load_rate" in state:
        print(f"loaded through the batch endpoint at {state['load_rate']:.0f} memories/s")
    header = ("request (ms)", "HTTP p50", "p95", "in-proc", "p95")
    print("{:34s} {:>8s} {:>8s}   {:>8s} {:>8s}   ratio".format(*header))
    print(row("empty stdlib server, GET", base_get, None, baseline))
    print(row("empty stdlib server, POST", base_post, None, baseline))
    for name, latencies in http.items():
        print(row(name, latencies, local.get(name), baseline))
    writes = [] if args.reads_only else [("short", batch_short), ("chat-turn-length", batch_chat)]
    if writes:
        single = 1000 / statistics.median(http["remember (one memory)"])
        print(f"remember, sequential: {single:.0f} memories/s")
    for name, latencies in writes:
        rate = 100_000 / statistics.median(latencies)
        print(
            f"batch of 100 {name} memories: p50 {statistics.median(latencies):.0f} ms, "
            f"p95 {percentile(latencies, 95):.0f} ms, {rate:.0f} memories/s"
        )
    print("ratio: HTTP p50 over the empty server's GET p50")
    for plain, dated in (
        ("recall, one scope", "recall, one scope, as_of"),
        ("recall, across all scopes", "recall, all scopes, as_of"),
    ):
        ratio = statistics.median(http[dated]) / statistics.median(http[plain])
        tail = percentile(http[dated], 95) / percentile(http[plain], 95)
        print(f"{dated}: {ratio:.2f}x the p50 of {plain} ({tail:.2f}x at p95)")


if __name__ == "__main__":
    main()
