"""Recall beside a batch writer in the same web process, with and without the bulk process.

    .venv/bin/python bench/bulk.py [--memories 2000] [--seconds 40] [--rounds 2]

`make run` hands each batch to a bulk process (zeromemory.core.bulk, ZM_BULK_PROCESSES). This
measures what that is for, with the placement that the kernel otherwise picks at random fixed:
one web process (ZM_WEB_PROCESSES=1), so the writer's connection and the reader's always share
it. For each setting (ZM_BULK_PROCESSES=1, then 0; `--rounds` times, alternating, each on a
server of its own over the same cached data), it times recalls in one scope over one keep-alive
connection: first idle (the worker stopped), then for `--seconds` beside another user's process
posting batches of 100 chat turns as fast as the server takes them (bench/busy.py's writer, one
in twenty German, translated by the worker through the suite's fake LLM). It prints p50 / p95
idle and busy, busy p95 over idle p95 (the issue's ratio) and the writer's chat turns.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _busy import fake_llm, load_average, server_pids, worker_paused
from _django import ROOT, percentile, setup_for
from _server import Api, served
from _serving_data import create_scope, data_dir_for, prepared, user_with_token
from serving import Requests

IDLE_RECALLS = 150


def timed_recalls(requests: Requests, api: Api, *, count: int = 0, until=None) -> list[float]:
    """Milliseconds of recalls, `count` of them or as long as `until()` is true."""
    latencies: list[float] = []
    while (len(latencies) < count) if count else until():
        started = time.perf_counter()
        status, answer = requests.recall_one(api.call, 0)
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200, answer
    return latencies


def measured(bulk: int, memories: int, seconds: float, stamp: int) -> dict:
    os.environ.update(ZM_WEB_PROCESSES="1", ZM_BULK_PROCESSES=str(bulk))
    data_dir, state = data_dir_for(memories, 1, False)
    with served(data_dir, keep_rate_limit=True) as port:
        setup_for(data_dir)
        state = prepared(port, data_dir, state, memories, 1)
        requests = Requests(state, stamp=stamp)
        api = Api(port, state["token"])
        timed_recalls(requests, api, count=20)  # warm
        with worker_paused(server_pids(port)[0]):
            idle = timed_recalls(requests, api, count=IDLE_RECALLS)
        token = user_with_token(f"writer{stamp}")
        scope = create_scope(Api(port, token), f"bulk{stamp}")
        command = [sys.executable, str(ROOT / "bench" / "busy.py"), "--write", str(port)]
        writer = subprocess.Popen([*command, token, scope, str(seconds)], stdout=subprocess.PIPE)
        busy = timed_recalls(requests, api, until=lambda: writer.poll() is None)
        written = json.loads(writer.stdout.read().decode())["written"]
    return {"idle": idle, "busy": busy, "written": written}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"start: {load_average()}")
    fake = fake_llm()  # the worker translates the writer's German turns through it
    os.environ.update(
        ANTHROPIC_API_KEY="bench-key", ANTHROPIC_BASE_URL=fake.url, NO_PROXY="127.0.0.1,localhost"
    )
    rows = []
    try:
        for number in range(args.rounds):
            for bulk in (1, 0) if number % 2 == 0 else (0, 1):
                stamp = int(time.time()) % 100_000
                rows.append((bulk, measured(bulk, args.memories, args.seconds, stamp)))
    finally:
        fake.stop()
    print(f"\nrecall in one scope of {args.memories} memories, one web process (ms)")
    print("bulk processes   idle p50 / p95    busy p50 / p95    busy p95 / idle p95   writer")
    for bulk, row in rows:
        idle, busy = row["idle"], row["busy"]
        print(
            f"{bulk:>14}   {statistics.median(idle):6.1f} / {percentile(idle, 95):6.1f}"
            f"   {statistics.median(busy):6.1f} / {percentile(busy, 95):6.1f}"
            f"   {percentile(busy, 95) / percentile(idle, 95):17.2f}x"
            f"   {row['written']:>6} chat turns ({len(busy)} busy recalls)"
        )
    print(f"end: {load_average()}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
