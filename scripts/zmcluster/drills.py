"""Fault drills under load through HAProxy: bench/load.py's clients (70% recall, 20% remember,
10% build_context, each its own user and token) while a fault happens, then every acknowledged
remember read back. Each drill returns its counts: requests, errors by status, acked, acked_lost.
"""

from __future__ import annotations

import collections
import itertools
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from scripts.zmcluster import apps, llm, postgres
from scripts.zmcluster.cluster import LB_PORT, PG_PORT, ROOT, Cluster

sys.path.insert(0, str(ROOT / "bench"))
from _chat import short_memory  # noqa: E402
from _server import Api  # noqa: E402
from _serving_data import create_scope, user_with_token, write_batches  # noqa: E402
from load import Client, drive, members  # noqa: E402

QUESTIONS = [
    "How many times does the billing service retry webhooks?",
    "Where is the billing webhook configuration?",
    "billing retries",
    "What does config/billing say about webhooks?",
]
SEED_MEMORIES = 300


@dataclass
class Drill:
    name: str
    clients: list[Client]
    started: float
    extra: dict[str, object] = field(default_factory=dict)

    def counts(self, lost: int) -> dict[str, object]:
        statuses = sum((c.statuses for c in self.clients), collections.Counter())
        errors = {str(s): n for s, n in sorted(statuses.items()) if s not in (200, 201, 202)}
        acked = sum(len(c.stored) for c in self.clients) + int(self.extra.get("chunks", 0))
        return {
            "requests": sum(statuses.values()) + int(self.extra.get("chunks", 0)),
            "errors": errors,
            "acked": acked,
            "acked_lost": lost,
            **self.extra,
        }

    def errors_after(self, moment: float) -> int:
        return sum(
            1 for c in self.clients for at, s in c.answered if at > moment and (s >= 500 or s == 0)
        )


class Bench:
    """The drills' fixtures (a scope, its seed memories, one user per client) and the load."""

    def __init__(self, cluster: Cluster, clients: int) -> None:
        apps.django_setup(cluster)
        self.cluster = cluster
        self.address = cluster.host("lb").address
        self.owner = Api(LB_PORT, user_with_token("drill-owner"), self.address)
        self.scope = create_scope(self.owner, "Drill")
        write_batches(self.owner, self.scope, [short_memory(n) for n in range(SEED_MEMORIES)])
        self.state = {"scopes": [self.scope], "writes": self.scope, "questions": [QUESTIONS]}
        self.tokens = [c.token for c in members(self.state, clients)]
        self.serials = itertools.count(int(time.time()) * 1000)

    def load(self, name: str, seconds: float, faults: list[tuple[float, Callable[[], None]]]):
        clients = [Client(n, token) for n, token in enumerate(self.tokens)]
        started = time.monotonic()
        args = (LB_PORT, self.state, started + seconds, self.serials, self.address)
        threads = [threading.Thread(target=drive, args=(c, *args)) for c in clients]
        for at, fault in faults:
            threads.append(threading.Thread(target=_after, args=(started + at, fault)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return Drill(name, clients, started)

    def lost(self, drill: Drill) -> int:
        """Acknowledged remembers that do not read back (each checked twice, 3 s apart)."""
        missing = [(c.token, m) for c in drill.clients for m in c.stored]
        for attempt in range(2):
            if attempt:
                time.sleep(3)
            missing = [(t, m) for t, m in missing if self._reads(t, m) != 200]
        return len(missing)

    def _reads(self, token: str, memory_id: str) -> int:
        try:
            return Api(LB_PORT, token, self.address).call("GET", f"/api/v1/memories/{memory_id}")[0]
        except OSError:
            return 0

    def finish(self, drill: Drill, lost: int = 0) -> dict[str, object]:
        counts = drill.counts(self.lost(drill) + lost)
        print(f"{drill.name}: {counts}", flush=True)
        return counts


def _after(moment: float, fault: Callable[[], None]) -> None:
    time.sleep(max(0.0, moment - time.monotonic()))
    fault()


def baseline(bench: Bench, seconds: float) -> dict[str, object]:
    return bench.finish(bench.load("load", seconds, []))


def web_kill(bench: Bench, seconds: float) -> dict[str, object]:
    """kill -9 every process of web1; HAProxy takes it out; then web1 is started again."""
    web1 = bench.cluster.host("web1")
    killed: dict[str, float] = {}

    def kill() -> None:
        killed["at"] = time.monotonic()
        killed["processes"] = web1.kill_all()

    drill = bench.load("web_kill", seconds, [(seconds / 3, kill)])
    drill.extra["errors_2s_after_kill"] = drill.errors_after(killed["at"] + 2)
    counts = bench.finish(drill)
    apps.start_web(bench.cluster, "web1")
    apps.wait_ready(bench.cluster)
    return counts


def worker_kill(bench: Bench, seconds: float, chunks: int = 40) -> dict[str, object]:
    """Chunks ingested, wk1 killed (kill -9 the host) mid-extraction: every chunk ends extracted,
    none twice (one provenance row per chunk), after the sweeper hands wk1's back."""
    from memories.models import Chunk, ChunkStatus, Provenance

    first = int(time.time()) % 100_000 * 100
    ids: list[str] = []
    for number in range(first, first + chunks):
        body = {"content": llm.chunk_text(number), "source_kind": "transcript", "client": "cli"}
        status, answer = bench.owner.call("POST", "/api/v1/ingest", {**body, "scope": bench.scope})
        assert status == 202, answer
        ids.append(answer["chunk"]["id"])
    wk1 = bench.cluster.host("wk1")
    drill = bench.load("worker_kill", seconds, [(3, wk1.kill_all)])
    deadline = time.monotonic() + 150  # the lease (10 s) and the sweeper's minute
    rows = Chunk.objects.filter(public_id__in=ids)
    while rows.exclude(status=ChunkStatus.EXTRACTED).exists() and time.monotonic() < deadline:
        time.sleep(2)
    extracted = rows.filter(status=ChunkStatus.EXTRACTED, kept=1).count()
    twice = sum(1 for c in rows if Provenance.objects.filter(chunk=c).count() != 1)
    drill.extra.update(chunks=chunks, extracted=extracted, extracted_twice=twice)
    counts = bench.finish(drill, lost=chunks - extracted + twice)
    apps.start_worker(bench.cluster, "wk1")
    return counts


def _server(cluster: Cluster, name: str) -> postgres.Server:
    root = cluster.state_dir / name
    return postgres.Server(cluster.host(name), root / "pgdata", PG_PORT, root / "postgres.log")


def replica_stop(bench: Bench, seconds: float) -> dict[str, object]:
    """The replica stops (fast shutdown) under load: reads move to the primary."""
    replica = _server(bench.cluster, "db2")
    drill = bench.load("replica_stop", seconds, [(seconds / 3, replica.stop)])
    counts = bench.finish(drill)
    replica.start()
    return counts


def primary_restart(bench: Bench, seconds: float, down_for: float = 10) -> dict[str, object]:
    """The primary stops for `down_for` seconds under load, then starts again; nothing else is
    restarted."""
    primary = _server(bench.cluster, "db1")
    back: dict[str, float] = {}

    def start() -> None:
        primary.start()
        back["at"] = time.monotonic()

    faults = [(seconds / 4, primary.stop), (seconds / 4 + down_for, start)]
    drill = bench.load("primary_restart", seconds, faults)
    drill.extra["errors_10s_after_restart"] = drill.errors_after(back["at"] + 10)
    without_code = sum(
        1 for c in drill.clients for f in c.failures if " 503 " in f and "unavailable" not in f
    )
    drill.extra["503_not_unavailable"] = without_code
    return bench.finish(drill)


def run_all(cluster: Cluster, clients: int, seconds: float) -> dict[str, dict[str, object]]:
    bench = Bench(cluster, clients)
    print(f"{clients} clients through HAProxy at {bench.cluster.url}", flush=True)
    return {
        "load": baseline(bench, seconds),
        "web_kill": web_kill(bench, seconds),
        "worker_kill": worker_kill(bench, seconds),
        "replica_stop": replica_stop(bench, seconds),
        "primary_restart": primary_restart(bench, seconds + 10),
    }
