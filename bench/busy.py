"""Foreground first: requests over HTTP on an idle server and on a busy one, side by side.

    .venv/bin/python bench/busy.py [--scale 1.0] [--busy-seconds 120] [--profile DIR]

A server started as `make run` starts it (web processes and the worker, the rate limit on) on a
fresh data directory and a free port, with the suite's fake Messages API (tests/fakes/) as its
LLM: it answers translation calls (echoing the text) and judge calls ("unrelated"), so every
background pass runs: canonicalization of the writer's German turns, the hygiene scan each
minute (ZM_HYGIENE_INTERVAL_MINUTES=1), the judge on the pairs the scan finds.

1. load: a reader writes 10,000 chat turns (× scale) into its scope through the batch endpoint;
   the worker meanwhile starts on what those writes cause;
2. idle, the worker's processes stopped (SIGSTOP) meanwhile: one keep-alive client times
   `GET /api/v1/me`, recall and build_context in that scope, single remember, and batches of
   100 short and of 100 chat-length memories;
3. busy: a writer (another user, another process, its own connection) posts batches of 100
   chat turns (one in twenty German) for `--busy-seconds`, while the same client repeats step 2
   over and over; the writer's rate and the worker's CPU time are printed;
4. the queue's depth when the writer stops (django-q2 tasks, pairs for the judge, translations)
   and how long it takes to drain (until `--drain-timeout`; what is left is printed);
5. the ceiling: the embedding model alone, timed in this process on the same texts before the
   load (one short text, batches of short and of chat-length texts, with a web process's
   threads, and that rate times the web processes), the bound for any request that embeds.

`--profile DIR` records py-spy profiles of the web processes in the busy phase (collapsed
stacks, `py-spy record --format raw`, requirements/dev.txt; flame graph tools read them).
The load average is printed at the start and at the end.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _busy import (
    drain,
    fake_llm,
    load_average,
    model_ceiling,
    profile,
    queue_depth,
    server_pids,
    web_pids,
    worker_cpu_seconds,
    worker_paused,
)
from _chat import conversations, short_memory
from _django import ROOT, percentile, setup_for
from _server import Api, served
from _serving_data import create_scope, user_with_token, write_batches

BATCH = 100
GERMAN = (
    "{name}: Ich habe am Wochenende mit meiner Schwester den Garten umgegraben und danach "
    "Kuchen gebacken, das war anstrengend aber schön ({n})."
)


class Client:
    """The timed requests, one at a time over one keep-alive connection."""

    def __init__(self, api: Api, scope: str, writes: str, questions: list[str]) -> None:
        self.api, self.scope, self.writes = api, scope, writes
        self.questions = itertools.cycle(questions)
        turns, _ = conversations(5_000, 1)
        self.turns = itertools.cycle(turn.content for turn in turns[0])
        self.serials = itertools.count(int(time.time()) % 100_000 * 1_000_000)
        self.times: dict[str, list[float]] = {}

    def _timed(self, name: str, method: str, path: str, body=None, ok=(200,)) -> None:
        started = time.perf_counter()
        status, answer = self.api.call(method, path, body)
        self.times.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        assert status in ok, (name, status, answer)

    def _items(self, chat: bool) -> list[dict]:
        items = []
        for _ in range(BATCH):
            serial = next(self.serials)
            text = f"{next(self.turns)} ({serial})" if chat else short_memory(serial)
            items.append({"content": text, "kind": "episode", "scope": self.writes})
        return items

    def round(self, requests: int, batches: int) -> None:
        for _ in range(requests):
            self._timed("GET /api/v1/me", "GET", "/api/v1/me")
            query = next(self.questions)
            self._timed(
                "recall", "POST", "/api/v1/recall", {"query": query, "scopes": [self.scope]}
            )
            body = {"topic": query, "scopes": [self.scope]}
            self._timed("build_context", "POST", "/api/v1/context", body)
            body = {
                "content": short_memory(next(self.serials)),
                "kind": "fact",
                "scope": self.writes,
            }
            self._timed("remember", "POST", "/api/v1/memories", body, ok=(201,))
        for _ in range(batches):
            for chat in (False, True):
                name = "batch of 100 chat" if chat else "batch of 100 short"
                body = {"items": self._items(chat)}
                self._timed(name, "POST", "/api/v1/memories/batch", body)


def writer(port: int, token: str, scope: str, seconds: float) -> None:
    """The busy writer's process: chat-turn batches for `seconds`; prints its count as JSON."""
    api = Api(port, token)
    turns, _ = conversations(20_000, 1)
    texts = itertools.cycle(turn.content for turn in turns[0])
    serials = itertools.count(1)
    written, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        items = []
        for _ in range(BATCH):
            n = next(serials)
            content = GERMAN.format(name="Mia", n=n) if n % 20 == 0 else f"{next(texts)} ({n})"
            items.append({"content": content, "kind": "episode", "scope": scope})
        status, answer = api.call("POST", "/api/v1/memories/batch", {"items": items})
        assert status == 200, answer
        written += len(items)
    print(json.dumps({"written": written, "seconds": time.perf_counter() - started}))


def figures(times: dict[str, list[float]]) -> dict[str, str]:
    shown = {}
    for name, values in times.items():
        p50, p95 = statistics.median(values), percentile(values, 95)
        shown[name] = f"{p50:7.2f} / {p95:7.2f}"
        if name == "remember":
            shown[name] += f" ({1000 / p50:4.0f}/s)"
        elif name.startswith("batch"):
            shown[name] = f"{p50:7.0f} / {p95:7.0f} ({BATCH * 1000 / p50:4.0f}/s)"
    return shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="memories and requests × this")
    parser.add_argument("--busy-seconds", type=float, default=120)
    parser.add_argument("--drain-timeout", type=float, default=900)
    parser.add_argument("--profile", type=Path, help="py-spy profiles of the web processes here")
    parser.add_argument("--write", nargs=4, help=argparse.SUPPRESS)  # the writer's process
    args = parser.parse_args()
    if args.write:
        port, token, scope, seconds = args.write
        writer(int(port), token, scope, float(seconds))
        return

    memories = max(BATCH, int(10_000 * args.scale))
    requests, batches = max(10, int(100 * args.scale)), max(1, int(3 * args.scale))
    print(f"start: {load_average()}")
    fake = fake_llm()
    data_dir = Path(tempfile.mkdtemp(prefix="zm-busy-"))
    os.environ.update(
        ANTHROPIC_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=fake.url,
        ZM_HYGIENE_INTERVAL_MINUTES="1",
        NO_PROXY="127.0.0.1,localhost",
    )
    try:
        with served(data_dir, keep_rate_limit=True) as port:
            setup_for(data_dir)
            server_pid = server_pids(port)[0]
            reader_token, writer_token = user_with_token("reader"), user_with_token("writer")
            api = Api(port, reader_token)
            scope, writes = create_scope(api, "chat"), create_scope(api, "writes")
            writer_scope = create_scope(Api(port, writer_token), "busy")
            turns, questions = conversations(memories, 1)
            ceiling = model_ceiling(
                short=[short_memory(n) for n in range(BATCH)],
                chat=[turn.content for turn in turns[0][:BATCH]],
            )
            started = time.perf_counter()
            write_batches(api, scope, [turn.content for turn in turns[0]])
            load_rate = memories / (time.perf_counter() - started)
            print(f"loaded {memories} chat turns at {load_rate:.0f}/s; queue {queue_depth()}")

            client = Client(api, scope, writes, questions[0])
            with worker_paused(server_pid):
                client.round(requests, batches)
            idle, client.times = client.times, {}

            command = [sys.executable, __file__, "--write", str(port), writer_token, writer_scope]
            process = subprocess.Popen(
                [*command, str(args.busy_seconds)], stdout=subprocess.PIPE, text=True
            )
            cpu_before, busy_started = worker_cpu_seconds(server_pid), time.perf_counter()
            judged_before = len(fake.requests)
            profiler = profile(args.profile, web_pids(server_pid), args.busy_seconds)
            while process.poll() is None:
                client.round(max(5, requests // 5), 1)
            busy_seconds = time.perf_counter() - busy_started
            worker_cpu = worker_cpu_seconds(server_pid) - cpu_before
            llm_calls = len(fake.requests) - judged_before
            written = json.loads(process.stdout.read())
            if profiler:
                for proc in profiler:
                    proc.wait()
            depth, stopped = queue_depth(), time.time()
            print(f"writer stopped; queue {depth}; draining", flush=True)
            judged = len(fake.requests)
            drained, left = drain(args.drain_timeout, after=stopped)
            judge_rate = (len(fake.requests) - judged) / max(1.0, time.time() - stopped) * 60
            busy = client.times
    except BaseException:
        log = (data_dir / "server.log").read_text(errors="replace")
        print(f"server log (end; kept in {data_dir}):\n" + log[-4000:], file=sys.stderr)
        raise
    else:
        shutil.rmtree(data_dir, ignore_errors=True)
    finally:
        fake.stop()

    idle_shown, busy_shown = figures(idle), figures(busy)
    print()
    print(f"{memories} memories in the read scope; idle: {requests} of each request; busy: the")
    print(f"same client for {busy_seconds:.0f} s beside a chat-turn writer (ms p50 / p95)")
    print(f"{'request':22s} {'idle':>28s} {'busy':>28s}")
    for name in idle_shown:
        print(f"{name:22s} {idle_shown[name]:>28s} {busy_shown.get(name, ''):>28s}")
    rate = written["written"] / written["seconds"]
    print(f"writer, batches of 100 chat turns (busy): {rate:.0f} memories/s")
    print(
        f"worker: {worker_cpu:.1f} CPU-seconds in the busy {busy_seconds:.0f} s "
        f"({worker_cpu / busy_seconds:.2f} cores), {llm_calls} LLM calls answered"
    )
    print(f"queue when the writer stopped: {depth}")
    if drained is not None:
        print(f"drained (and scanned again) in {drained:.1f} s")
    else:
        print(f"not drained in {args.drain_timeout:.0f} s: {left} left")
    print(f"LLM calls while draining: {judge_rate:.0f}/min")
    print("the embedding model alone (this process, idle server, a web process's threads):")
    for name, value in ceiling.items():
        print(f"  {name:32s} {value:8.1f}")
    print(f"end: {load_average()}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
