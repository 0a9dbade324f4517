"""What a single remember and a recall compete with on a busy server, request by request.

    .venv/bin/python bench/contention.py [--memories 2000] [--requests 100] [--busy-seconds 20]

`bench/floor.py --busy` says how much slower the interactive requests are beside a writer; this
says where it comes from. A server started as `make run` starts it (web processes, the bulk
process, the worker, the rate limit on) on a fresh copy of the serving data, with the suite's
fake Messages API as its LLM (bench/_busy.py), and one keep-alive client:

1. the cores one request takes: the worker stopped, each request's CPU time (every thread of
   the web process that serves the client's connection, and the database's backends) beside
   its wall time;
2. beside one other process: the worker stopped, each request runs alone or while a pure-Python
   loop runs (it is stopped, SIGSTOP, between requests), that loop at the worker's niceness in
   a session of its own with its autogroup lowered as `serve` lowers the worker's
   (ZM_WORKER_NICE), or under SCHED_IDLE; the three alternate request by request;
3. busy: another user posts batches of 100 chat turns as fast as the server takes them
   (bench/busy.py's writer) and the worker works off what they cause; each request runs with
   nothing stopped, the bulk process stopped, the worker's processes stopped, or both, stopped
   just before the request and continued right after it, in turn.

Its server runs without `serve`'s own stops of the background (ZM_FOREGROUND_STOP_MS=0 unless
the caller sets it; zeromemory/conductor.py): the stops the bench makes are those stops, made
from outside and without their bounds.

Alternating request by request puts every variant in the same minute of a machine whose speed
drifts; each line gives the p50 and p95 and the p50's ratio to the first variant's.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial

import psutil
from _busy import fake_llm, load_average, server_pids, web_pids, worker_paused
from _django import ROOT, percentile, setup_for
from _server import Api, served
from _serving_data import create_scope, data_dir_for, prepared, user_with_token
from serving import Requests

# A process that wants a whole core and does nothing else.
LOOP = "while True:\n    pass\n"


def answered(request: Callable[[], tuple[int, dict]]) -> Callable[[], None]:
    """The request, its answer checked: a refused one (the rate limit's 429) must not be timed."""

    def call() -> None:
        status, body = request()
        assert status in (200, 201), (status, body)

    return call


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of `pid` so far (the scheduler's own count, in nanoseconds)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError):  # a thread that ended meanwhile
            continue
    return total


def serving_process(port: int, api: Api) -> int:
    """The web process holding the client's connection (the kernel hands each connection to one)."""
    local = api.connection.sock.getsockname()[1]
    for pid in web_pids(server_pids(port)[0]):
        connections = psutil.Process(pid).net_connections(kind="tcp")
        if any(c.raddr and c.raddr.port == local for c in connections):
            return pid
    raise RuntimeError("no web process holds the client's connection")


def backends() -> list[int]:
    """The database's client backends, this process's own left out."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
        )
        return [pid for (pid,) in cursor.fetchall()]


def cores_taken(port: int, api: Api, calls: dict[str, Callable], count: int) -> None:
    web = serving_process(port, api)
    print("\nthe cores one request takes (worker stopped): wall p50, then CPU a request (means)")
    for name, call in calls.items():
        database = backends()
        walls, web_ms, database_ms = [], [], []
        for _ in range(count):
            before = cpu_ns(web), sum(cpu_ns(pid) for pid in database)
            started = time.perf_counter()
            call()
            walls.append((time.perf_counter() - started) * 1000)
            web_ms.append((cpu_ns(web) - before[0]) / 1e6)
            database_ms.append((sum(cpu_ns(pid) for pid in database) - before[1]) / 1e6)
        wall = statistics.mean(walls)
        cpu = statistics.mean(web_ms) + statistics.mean(database_ms)
        print(
            f"  {name:9s} p50 {statistics.median(walls):6.2f} ms; web process "
            f"{statistics.mean(web_ms):5.2f} ms, database {statistics.mean(database_ms):5.2f} ms"
            f" of CPU: {cpu / wall:.2f} cores over its mean wall time {wall:.2f} ms"
        )


def _loop_at(nice: int, *, idle: bool) -> Callable[[], None]:
    def started() -> None:  # in the child, before the loop starts
        from zeromemory.supervisor import lower_priority

        os.setsid()
        lower_priority(nice)  # its niceness, and its session's autogroup's
        if idle:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

    return started


def alternated(
    calls: dict[str, Callable], variants: dict[str, Callable[[], Iterator[None]]], count: int
) -> None:
    """Each request under each variant in turn; p50 / p95 and the ratio to the first variant."""
    for name, call in calls.items():
        times: dict[str, list[float]] = {variant: [] for variant in variants}
        for n in range(2 + count * len(variants)):
            variant = list(variants)[n % len(variants)]
            with variants[variant]():
                started = time.perf_counter()
                call()
                elapsed = (time.perf_counter() - started) * 1000
            if n >= 2:
                times[variant].append(elapsed)
        first = statistics.median(times[next(iter(variants))])
        for variant, values in times.items():
            p50 = statistics.median(values)
            print(
                f"  {name:9s} {variant:46s} p50 {p50:6.2f} p95 {percentile(values, 95):6.2f}"
                f"  {p50 / first:.2f}x"
            )


@contextmanager
def nothing() -> Iterator[None]:
    yield


def running(pids: list[int]) -> Callable[[], Iterator[None]]:
    """A variant: `pids` continued for the request (else stopped)."""

    @contextmanager
    def variant() -> Iterator[None]:
        send(pids, signal.SIGCONT)
        time.sleep(0.002)  # scheduled again before the request starts
        try:
            yield
        finally:
            send(pids, signal.SIGSTOP)

    return variant


def stopped(pids: list[int]) -> Callable[[], Iterator[None]]:
    """A variant: `pids` stopped for the request (else running)."""

    @contextmanager
    def variant() -> Iterator[None]:
        send(pids, signal.SIGSTOP)
        try:
            yield
        finally:
            send(pids, signal.SIGCONT)

    return variant


def together(*variants: Callable[[], Iterator[None]]) -> Callable[[], Iterator[None]]:
    @contextmanager
    def variant() -> Iterator[None]:
        with ExitStack() as stack:
            for each in variants:
                stack.enter_context(each())
            yield

    return variant


def send(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            continue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=100, help="per kind and variant")
    parser.add_argument("--busy-seconds", type=float, default=20, help="writer's lead-in")
    args = parser.parse_args()

    print(f"start: {load_average()}")
    fake = fake_llm()  # the worker translates the writer's German turns, judges the pairs
    os.environ.update(
        ANTHROPIC_API_KEY="bench-key", ANTHROPIC_BASE_URL=fake.url, NO_PROXY="127.0.0.1,localhost"
    )
    os.environ.setdefault("ZM_FOREGROUND_STOP_MS", "0")  # the stops are the bench's own
    data_dir, state = data_dir_for(args.memories, 1, True)
    loops: list[subprocess.Popen] = []
    writer = None
    try:
        with served(data_dir, keep_rate_limit=True) as port:
            setup_for(data_dir)
            from django.conf import settings

            state = prepared(port, data_dir, state, args.memories, 1)
            requests = Requests(state, stamp=int(time.time()) % 100_000)
            api = Api(port, state["token"])
            calls = {
                "remember": answered(lambda: requests.remember(api.call, 0)),
                "recall": answered(lambda: requests.recall_one(api.call, 0)),
            }
            for call in calls.values():
                for _ in range(20):  # warm: the model, the statements' plans, the connection
                    call()
            server = server_pids(port)[0]
            bulk = [p.pid for p in psutil.Process(server).children() if "--bulk" in p.cmdline()]
            worker = partial(worker_paused, server)

            with worker():
                cores_taken(port, api, calls, args.requests)
                for nice, idle in ((settings.WORKER_NICE, False), (0, True)):
                    started = _loop_at(nice, idle=idle)
                    loops.append(subprocess.Popen([sys.executable, "-c", LOOP], preexec_fn=started))
                time.sleep(0.5)
                send([loop.pid for loop in loops], signal.SIGSTOP)
                print(
                    "\nbeside one pure-Python loop, alternated request by request (worker stopped)"
                )
                alternated(
                    calls,
                    {
                        "alone": nothing,
                        f"loop at nice {settings.WORKER_NICE}, own session (as the worker)": (
                            running([loops[0].pid])
                        ),
                        "loop under SCHED_IDLE, own session": running([loops[1].pid]),
                    },
                    args.requests,
                )

            token = user_with_token("writer")
            scope = create_scope(Api(port, token), "contention")
            command = [sys.executable, str(ROOT / "bench" / "busy.py"), "--write", str(port)]
            writer = subprocess.Popen([*command, token, scope, "3600"], stdout=subprocess.PIPE)
            time.sleep(args.busy_seconds)  # the worker has work by then
            print(
                "\nbusy (a chat-turn writer, the worker working): stopped for the request, "
                "alternated request by request"
            )
            alternated(
                calls,
                {
                    "nothing stopped": nothing,
                    "bulk process stopped": stopped(bulk),
                    "worker stopped": worker,
                    "both stopped": together(stopped(bulk), worker),
                },
                args.requests,
            )
            writer.kill()  # before the server stops under it
            writer.wait()
    finally:
        for process in [*loops, *([writer] if writer else [])]:
            process.kill()
            process.wait()
        fake.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    print(f"end: {load_average()}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # the suite's fake Messages API (tests/fakes/)
    main()
