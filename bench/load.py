"""Load: N clients at once for T seconds against a real server, then a check that nothing
acknowledged was lost.

    .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--memories 10000]

Starts `manage.py serve` as `make run` does (every default, the rate limit included) on a free
loopback port, with the data directory of bench/serving.py for that size (written first when
missing). Each client is its own user with its own token, a writer in the shared chat scope;
each loops over its own keep-alive connection: 70% recall, 20% remember, 10% build_context,
as fast as answers come. Prints throughput, latency percentiles per kind, errors by status;
afterwards every memory a client was told was stored (201) is read back with its token.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import itertools
import random
import statistics
import threading
import time
from dataclasses import dataclass, field

from _chat import short_memory
from _django import percentile, setup_for
from _server import Api, served
from _serving_data import data_dir_for, prepared, user_with_token

MAX_CLIENTS, MAX_SECONDS = 500, 1800
MIX = (("recall", 0.7), ("remember", 0.2), ("context", 0.1))
ERROR_PAUSE = 0.5  # seconds a client waits after an error answer before its next request


@dataclass
class Client:
    number: int
    token: str
    latencies: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    statuses: collections.Counter = field(default_factory=collections.Counter)
    stored: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    answered: list[tuple[float, int]] = field(default_factory=list)  # (monotonic time, status)


def members(state: dict, count: int) -> list[Client]:
    """`count` users, each with a token and write access to the chat and write scopes."""
    from scopes.models import Role, Scope
    from scopes.services import membership_add

    scopes = list(Scope.objects.filter(public_id__in=[state["scopes"][0], state["writes"]]))
    clients = []
    for number in range(count):
        username = f"load-{number:03d}"
        token = user_with_token(username)
        for scope in scopes:
            if not scope.memberships.filter(user__username=username).exists():
                membership_add(scope=scope, username=username, role=Role.WRITER)
        clients.append(Client(number, token))
    return clients


def drive(
    client: Client, port: int, state: dict, until: float, serials, host: str = "127.0.0.1"
) -> None:
    api = Api(port, client.token, host)
    rng = random.Random(client.number)
    questions = state["questions"][0]
    kinds, weights = zip(*MIX, strict=True)
    while time.monotonic() < until:
        kind = rng.choices(kinds, weights)[0]
        if kind == "recall":
            body, path = {"query": rng.choice(questions), "scopes": [state["scopes"][0]]}, "recall"
        elif kind == "context":
            body, path = {"topic": rng.choice(questions)}, "context"
        else:
            content = short_memory(next(serials))
            body, path = {"content": content, "kind": "fact", "scope": state["writes"]}, "memories"
        started = time.perf_counter()
        try:
            status, answer = api.call("POST", f"/api/v1/{path}", body)
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, cut: an error too
            status, answer = 0, {"error": str(exc)}
            api = Api(port, client.token, host)
        client.latencies[kind].append((time.perf_counter() - started) * 1000)
        client.statuses[status] += 1
        client.answered.append((time.monotonic(), status))
        if kind == "remember" and status == 201:
            client.stored.append(answer["id"])
        elif status not in (200, 201):
            client.failures.append(f"{kind} {status} {str(answer)[:200]}")
            time.sleep(ERROR_PAUSE)


def read_back(port: int, clients: list[Client]) -> tuple[int, int]:
    checked = missing = 0
    for client in clients:
        api = Api(port, client.token)
        for memory_id in client.stored:
            status, _ = api.call("GET", f"/api/v1/memories/{memory_id}")
            checked += 1
            missing += status != 200
    return checked, missing


def report(clients: list[Client], seconds: float) -> None:
    every = [x for c in clients for values in c.latencies.values() for x in values]
    statuses = sum((c.statuses for c in clients), collections.Counter())
    print(f"{len(every)} requests in {seconds:.1f} s: {len(every) / seconds:.1f} requests/s")
    print(
        f"latency, all: p50 {statistics.median(every):.0f} ms, p95 {percentile(every, 95):.0f} ms,"
        f" p99 {percentile(every, 99):.0f} ms, max {max(every):.0f} ms"
    )
    for kind, _ in MIX:
        values = [x for c in clients for x in c.latencies[kind]]
        if values:
            print(
                f"  {kind:9s} {len(values):6d}  p50 {statistics.median(values):6.0f} ms  "
                f"p95 {percentile(values, 95):6.0f} ms  p99 {percentile(values, 99):6.0f} ms"
            )
    errors = {status: n for status, n in statuses.items() if status not in (200, 201)}
    print(f"answers by status: {dict(sorted(statuses.items()))}; errors: {errors or 'none'}")
    for failure in [f for c in clients for f in c.failures][:5]:
        print(f"  e.g. {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    if not (1 <= args.clients <= MAX_CLIENTS and 1 <= args.seconds <= MAX_SECONDS):
        raise SystemExit(f"--clients 1..{MAX_CLIENTS} and --seconds 1..{MAX_SECONDS}")

    data_dir, state = data_dir_for(args.memories, 1, fresh=False)
    with served(data_dir, keep_rate_limit=True) as port:
        setup_for(data_dir)
        state = prepared(port, data_dir, state, args.memories, 1)
        clients = members(state, args.clients)
        # New text for every write; next() of a count is atomic, so the threads can share it.
        shared = itertools.count(int(time.time()) * 1000)
        print(f"{args.clients} clients for {args.seconds:.0f} s, mix {dict(MIX)}")
        started = time.monotonic()
        until = started + args.seconds
        threads = [
            threading.Thread(target=drive, args=(client, port, state, until, shared))
            for client in clients
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.monotonic() - started
        report(clients, elapsed)
        checked, missing = read_back(port, clients)
        print(f"read back: {checked} acknowledged remembers, {missing} missing")


if __name__ == "__main__":
    main()
