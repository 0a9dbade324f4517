"""Where a request's time goes in the web processes: py-spy over HTTP, one kind of request at once.

    .venv/bin/python bench/profiles.py [--memories 2000] [--seconds 20] [--rate 250]
                                      [--only recall,remember] [--out DIR]

Starts `manage.py serve` as `make run` does (bench/serving.py's server, data directory and
requests; the worker stopped with SIGSTOP so it takes no core), then for each kind of request
(recall in one scope, build_context, briefing, remember one memory, batches of 100 short memories
and of 100 chat turns) records every web process with `py-spy record` (CPU samples only: a thread
waiting on PostgreSQL or on the socket is not sampled) while one client sends that request over
one keep-alive connection, one at a time, for `--seconds`. Prints, for each kind, the requests
sent and their p50, then the share of the samples in each step (inclusive: a step's callees
count in it) for the steps named in STEPS, and the top frames by samples of their own. The
collapsed stacks stay in `--out` (default bench/.cache/profiles/) for a flame graph
(`flamegraph.pl` or speedscope).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from _busy import record, server_pids, web_pids, worker_paused
from _django import ROOT, percentile, setup_for
from _server import Api, served
from _serving_data import data_dir_for, prepared
from floor import request_calls
from serving import Requests

# What each step of a request is, as a frame of py-spy's stacks (function and file, a substring
# of "function (file)"), in the order a request meets them.
STEPS = (
    (
        "HTTP, ASGI and the thread hand-off",
        ("(uvicorn/", "(a2wsgi/", "(uvloop/", "(zeromemory/core/wsgi_bridge"),
    ),
    ("middleware and authentication", ("authenticate (", "process_request (", "__call__ (django/")),
    ("request parsing and validation", ("is_valid (", "validate_python (", "model_validate (")),
    ("content guard", ("refuse_secrets (",)),
    ("language detection", ("detect_language (", "language_of (", "polyglot")),
    ("entities found in the text", ("(memories/entities/",)),
    ("tokenization (model)", ("preprocess (sentence_transformers", "tokenize (")),
    ("model forward pass", ("forward (torch/", "_call_impl (torch/")),
    ("token counting", ("count_tokens (",)),
    ("SQL: psycopg execute and fetch", ("execute (psycopg/", "fetchall (psycopg/", "_execute")),
    ("ORM: compiling queries, building objects", ("as_sql (django/", "from_db (django/")),
    ("activity row", ("(memories/activity/",)),
    ("serialization (pydantic, JSON)", ("model_dump", "dumps (json", "render (rest_framework")),
)
KINDS = {
    "recall": "recall, one scope",
    "context": "build_context",
    "briefing": "briefing",
    "remember": "remember (one memory)",
    "short": "batch of 100 short",
    "chat": "batch of 100 chat turns",
}


def stacks(files: list[Path]) -> list[tuple[list[str], int]]:
    found = []
    for file in files:
        for line in file.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if stack:
                found.append((stack.split(";"), int(count)))
    return found


def summary(found: list[tuple[list[str], int]], top: int) -> str:
    total = sum(count for _, count in found) or 1
    lines = [f"  {total} samples"]
    for step, needles in STEPS:
        inside = sum(
            count
            for frames, count in found
            if any(needle in frame for frame in frames for needle in needles)
        )
        if inside:
            lines.append(f"  {100 * inside / total:5.1f}%  {step}")
    own = Counter()
    for frames, count in found:
        own[frames[-1]] += count
    lines.append("  top frames by own samples:")
    for frame, count in own.most_common(top):
        lines.append(f"  {100 * count / total:5.1f}%  {frame[:120]}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples a second")
    parser.add_argument("--only", default=",".join(KINDS), help=f"of {','.join(KINDS)}")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / ".cache" / "profiles")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir, state = data_dir_for(args.memories, 1, False)
    with served(data_dir, keep_rate_limit=False) as port:
        setup_for(data_dir)
        state = prepared(port, data_dir, state, args.memories, 1)
        requests = Requests(state, stamp=int(time.time()) % 100_000)
        calls = request_calls(requests)
        api = Api(port, state["token"])
        server = server_pids(port)
        with worker_paused(server[0]):
            pids = web_pids(server[0]) or server
            for short in args.only.split(","):
                name = KINDS[short]
                for _ in range(3):  # warm
                    calls[name](api.call)
                output = args.out / f"{short}.txt"
                for old in args.out.glob(f"{short}-*.txt"):
                    old.unlink()
                profilers = record(pids, output, args.seconds, args.rate)
                time.sleep(1.0)  # py-spy attached
                latencies, ends = [], time.monotonic() + args.seconds - 2
                while time.monotonic() < ends:
                    started = time.perf_counter()
                    status, body = calls[name](api.call)
                    latencies.append((time.perf_counter() - started) * 1000)
                    assert status in (200, 201), (status, body)
                for profiler in profilers:
                    profiler.wait()
                p50, p95 = statistics.median(latencies), percentile(latencies, 95)
                print(f"\n{name}: {len(latencies)} requests, p50 {p50:.1f} ms, p95 {p95:.1f} ms")
                print(summary(stacks(sorted(args.out.glob(f"{short}-*.txt"))), args.top))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
