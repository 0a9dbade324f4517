"""How every request's cost grows with the data set: the same requests at 10,000, 100,000 and
1,000,000 memories, in one run, over HTTP from this process to a real server.

    .venv/bin/python bench/scale.py [--sizes 10000,100000,1000000] [--requests 50] [--keep]

The data set is a company's deployment (bench/_scale_data.py): 400 people, each with a personal
scope and in 19 of 80 team and project scopes; at a million memories the personal scopes hold 500
each and the teams 2,000 to 50,000 (5 of 50,000, 15 of 20,000, 20 of 8,000, 40 of 2,250), and at
a smaller size every scope its share of it. The texts are the watcher's mix of kinds (chat-length
episodes, short decisions, conventions, gotchas, preferences, facts).

Stage by stage, in one run: the first stage writes a part through /api/v1/memories/batch (each
memory embedded by the server, `--http` of them); every stage copies the rest in SQL (a written
memory's text with a serial number, its embedding moved by a little noise, a time in the past
year) and fills the search copy of the new memories in one statement (memories.models.search:
the table partitioned by scope that recall searches), its indexes dropped before and built once
after (timed: the partitions' HNSW indexes, then the others); then, one request at a time over
one keep-alive connection, p50 and p95 of (`--passes` times, 2 by default: the first on the
caches the build left, the next on caches the requests warmed; the summary is the last's):
recall in the largest scope, across person 0's 20 scopes, across all 81 of the admin's; recall
across the person's scopes with `as_of`;
build_context; briefing; remember, single and in batches of 100, into the largest scope; a
memory's history; the insights answer; the export of the largest scope (memories/s); one hygiene
scan of it (every slice); the resident memory of the web processes and of the worker; the table
and index sizes per memory. An empty HTTP server's GET p50 is measured beside them, the floor.

The data directory is bench/.cache/scale/ (or `--data-dir`; its server log there); `--keep` reuses
it (the stages already built are not built again), otherwise it starts empty.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import random
import shutil
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _chat import conversations, short_memory
from _django import percentile, setup_for
from _scale_data import (
    SCOPES_PER_PERSON,
    Scope,
    create_people,
    grow,
    layout,
    write_over_http,
)
from _server import Api, free_port, served, start_baseline

CACHE = Path(__file__).resolve().parent / ".cache" / "scale"
WARMUP = 5


def timed(call: Callable[[int], tuple[int, dict]], requests: int, ok=(200,)) -> list[float]:
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


def processes_memory(data_dir: Path) -> dict[str, float]:
    """Resident memory (MB) of the served web processes and of the worker (its process and the
    processes it forks), found by their data directory."""
    import psutil

    found = {"web": 0.0, "worker": 0.0}
    for process in psutil.process_iter(["cmdline"]):
        try:
            if process.environ().get("ZM_DATA_DIR") != str(data_dir):
                continue
            command = " ".join(process.info["cmdline"] or [])
            resident = process.memory_info().rss / 2**20
        except (psutil.Error, OSError):
            continue
        if "zeromemory.web" in command:
            found["web"] += resident
        elif "qcluster" in command:
            found["worker"] += resident
    return found


def sizes_per_memory() -> dict[str, float]:
    """Bytes per memory of the memories table, each of its indexes, its search copy (all its
    partitions) with each of its indexes, and the tables that hang off it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memory")
        (memories,) = cursor.fetchone()
        cursor.execute(
            "SELECT 'table (heap + TOAST)', pg_table_size('memories_memory')"
            " UNION ALL SELECT 'index ' || indexname, pg_relation_size(indexname::regclass)"
            " FROM pg_indexes WHERE tablename = 'memories_memory'"
            " UNION ALL SELECT 'search copy (heap + TOAST, every partition)',"
            " sum(pg_table_size(relid))"
            " FROM pg_partition_tree('memories_memorysearch') WHERE isleaf"
            " UNION ALL SELECT 'search copy index ' || i.indexname, sum(pg_relation_size(t.relid))"
            " FROM pg_indexes i CROSS JOIN LATERAL pg_partition_tree(i.indexname::regclass) t"
            " WHERE i.tablename = 'memories_memorysearch' AND t.isleaf GROUP BY i.indexname"
            " UNION ALL SELECT relname, pg_total_relation_size(oid) FROM pg_class"
            " WHERE relname IN ('memories_provenance', 'memories_validityperiod',"
            " 'memories_memorywindow')"
        )
        sizes = {name: size / memories for name, size in cursor.fetchall()}
        cursor.execute(
            "SELECT pg_total_relation_size('memories_memory'),"
            " (SELECT sum(pg_total_relation_size(relid))"
            " FROM pg_partition_tree('memories_memorysearch') WHERE isleaf)"
        )
        table, search = cursor.fetchone()
        sizes["memories_memory in all"] = table / memories
        sizes["memories_memorysearch in all"] = search / memories
    return sizes


class Requests:
    """The measured requests, each a function of its sequence number."""

    def __init__(self, state: dict) -> None:
        _, questions = conversations(4000, 1)
        topics = [f"how do we handle {thing} in the {service} service" for thing, service in
                  itertools.product(["retries", "migrations", "feature flags", "errors"],
                                    ["billing", "search", "auth", "ingest"])]  # fmt: skip
        mixed = questions[0] + topics
        random.Random(5).shuffle(mixed)
        self.queries = itertools.cycle(mixed)
        self.state = state
        self.serials = itertools.count(int(time.time()) % 100_000 * 1_000_000)
        self.as_of = (datetime.now(UTC) - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.history_ids = itertools.cycle(state["history_ids"])

    def recall(self, call, *, scopes=None, as_of=False):
        body = {"query": next(self.queries)}
        if scopes:
            body["scopes"] = scopes
        if as_of:
            body["as_of"] = self.as_of
        return call("POST", "/api/v1/recall", body)

    def remember(self, call):
        body = {
            "content": short_memory(next(self.serials)),
            "kind": "fact",
            "scope": self.state["largest"],
        }
        return call("POST", "/api/v1/memories", body)

    def batch(self, call):
        items = [
            {"content": short_memory(next(self.serials)), "kind": "fact",
             "scope": self.state["largest"]}
            for _ in range(100)
        ]  # fmt: skip
        return call("POST", "/api/v1/memories/batch", {"items": items})


def export_rate(port: int, token: str, scope: str) -> tuple[float, int]:
    """Seconds to download the scope's export, and its size in bytes."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1800)
    started = time.perf_counter()
    connection.request(
        "GET", f"/api/v1/scopes/{scope}/export", headers={"Authorization": f"Bearer {token}"}
    )
    response = connection.getresponse()
    body = response.read()
    seconds = time.perf_counter() - started
    assert response.status == 200, (response.status, body[:200])
    connection.close()
    return seconds, len(body)


def hygiene_scan(api: Api, scope: str, calls: int) -> dict:
    """An admin's scan of one scope on request, as a client loops over `more`: each call
    compares the next share of subjects (500 changed since the last finished scan, after the
    previous answer's next_cursor) against the whole scope."""
    slices, answer = [], {}
    for _ in range(calls):
        body = {"cursor": answer["next_cursor"]} if answer.get("next_cursor") else None
        started = time.perf_counter()
        status, answer = api.call("POST", f"/api/v1/scopes/{scope}/hygiene-scan", body)
        slices.append((time.perf_counter() - started) * 1000)
        assert status == 200, answer
    return {"slices": slices, "subjects": answer["subjects"], "pairs": answer["pairs_found"]}


def measure(port: int, data_dir: Path, state: dict, requests: int, batches: int) -> dict:
    admin = Api(port, state["admin_token"])
    person = Api(port, state["person_token"])
    asks = Requests(state)
    largest = [state["largest"]]
    rows: dict[str, list[float]] = {}
    print("  measuring over HTTP", flush=True)
    rows["recall, one scope (the largest)"] = timed(
        lambda n: asks.recall(admin.call, scopes=largest), requests
    )
    rows[f"recall, a person's {SCOPES_PER_PERSON} scopes"] = timed(
        lambda n: asks.recall(person.call), requests
    )
    rows[f"recall, the admin's {state['admin_scopes']} scopes"] = timed(
        lambda n: asks.recall(admin.call), requests
    )
    rows["recall, one scope, as_of 30 days ago"] = timed(
        lambda n: asks.recall(admin.call, scopes=largest, as_of=True), requests
    )
    rows["recall, a person's scopes, as_of"] = timed(
        lambda n: asks.recall(person.call, as_of=True), requests
    )
    rows["build_context, a person's scopes"] = timed(
        lambda n: person.call("POST", "/api/v1/context", {"topic": next(asks.queries)}), requests
    )
    rows["briefing, a person's scopes"] = timed(
        lambda n: person.call("GET", "/api/v1/briefing"), requests
    )
    rows["history of a memory"] = timed(
        lambda n: admin.call("GET", f"/api/v1/memories/{next(asks.history_ids)}/history"),
        requests,
    )
    rows["insights, the largest scope, 30 days"] = timed(
        lambda n: admin.call("GET", f"/api/v1/insights?scope={state['largest']}&days=30"),
        requests,
    )
    rows["remember, one memory, the largest scope"] = timed(
        lambda n: asks.remember(admin.call), requests, ok=(201,)
    )
    rows["remember, batch of 100, the largest scope"] = timed(
        lambda n: asks.batch(admin.call), batches
    )
    export_seconds, export_bytes = export_rate(port, state["admin_token"], state["largest"])
    scan = hygiene_scan(admin, state["largest"], calls=5)
    empty = Api(state["baseline_port"])
    floor = timed(lambda n: empty.call("GET", "/healthz"), requests)
    return {
        "rows": rows,
        "floor": floor,
        "export_seconds": export_seconds,
        "export_bytes": export_bytes,
        "scan": scan,
        "memory": processes_memory(data_dir),
        "sizes": sizes_per_memory(),
    }


def largest_scope_count(state: dict) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memories_memory m JOIN scopes_scope s ON s.id = m.scope_id"
            " WHERE s.public_id = %s",
            [state["largest"]],
        )
        return cursor.fetchone()[0]


def history_ids(scope: str) -> list[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.public_id FROM memories_memory m JOIN scopes_scope s ON s.id = m.scope_id"
            " WHERE s.public_id = %s ORDER BY md5(m.public_id) LIMIT 200",
            [scope],
        )
        return [public_id for (public_id,) in cursor.fetchall()]


def report(stage: dict) -> None:
    size = stage["memories"]
    measured = stage["measured"]
    floor = statistics.median(measured["floor"])
    print()
    print(
        f"=== {size:,} memories ({stage['largest_count']:,} in the largest scope), pass"
        f" {stage['pass']}; load average"
        f" {stage['load'][0]:.1f} before, {stage['load'][1]:.1f} after the measuring ==="
    )
    print(f"{'request at ' + f'{size:,}':46s} {'p50 ms':>8s} {'p95 ms':>8s}")
    print(f"{'empty stdlib HTTP server, GET (the floor)':46s} {floor:8.2f} "
          f"{percentile(measured['floor'], 95):8.2f}")  # fmt: skip
    for name, latencies in measured["rows"].items():
        print(f"{name:46s} {statistics.median(latencies):8.2f} {percentile(latencies, 95):8.2f}")
    batch = statistics.median(measured["rows"]["remember, batch of 100, the largest scope"])
    print(f"batch remember at {size:,}: {100_000 / batch:.0f} memories/s")
    rate = stage["largest_count"] / measured["export_seconds"]
    print(
        f"export of the largest scope at {size:,}: {stage['largest_count']:,} memories in "
        f"{measured['export_seconds']:.1f} s ({rate:.0f} memories/s, "
        f"{measured['export_bytes'] / 2**20:.1f} MB)"
    )
    scan = measured["scan"]
    slices = -(-stage["largest_count"] // max(1, scan["subjects"]))
    print(
        f"hygiene scan of the largest scope at {size:,}: a slice of {scan['subjects']} subjects"
        f" p50 {statistics.median(scan['slices']):.0f} ms, p95 "
        f"{percentile(scan['slices'], 95):.0f} ms ({scan['pairs']} pairs); the whole scope in "
        f"{slices} slices: about {slices * statistics.median(scan['slices']) / 1000:.0f} s"
    )
    memory = measured["memory"]
    print(
        f"resident memory at {size:,}: web {memory['web']:.0f} MB, worker {memory['worker']:.0f} MB"
    )
    print(f"bytes per memory at {size:,}:")
    for name, per in measured["sizes"].items():
        print(f"  {name:60s} {per:8.0f}")
    timings = stage["timings"]
    print(
        f"built at {size:,}: copy in SQL {timings['copy']:.0f} s, search rows "
        f"{timings.get('search_fill', 0):.0f} s, HNSW indexes {timings['index']:.0f} s, GIN and "
        f"memory_id indexes {timings.get('other_indexes', 0):.0f} s, vacuum + analyze "
        f"{timings['vacuum']:.0f} s"
    )


def summary(stages: list[dict], key: str = "measured") -> None:
    if len(stages) < 2:
        return
    print()
    print("the first pass, on the caches each build left:" if key == "first" else "the last pass:")
    names = list(stages[0][key]["rows"])
    header = "".join(f"{stage['memories']:>18,}" for stage in stages)
    print(f"{'p50 / p95 ms at':46s}{header}   growth of p95")
    for name in names:
        cells = ""
        for stage in stages:
            latencies = stage[key]["rows"][name]
            cells += f"{statistics.median(latencies):9.1f}/{percentile(latencies, 95):<8.1f}"
        first = percentile(stages[0][key]["rows"][name], 95)
        last = percentile(stages[-1][key]["rows"][name], 95)
        print(f"{name:46s}{cells}   {last / first:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--requests", type=int, default=50, help="per kind of request")
    parser.add_argument("--batches", type=int, default=5, help="batches of 100 remembered")
    parser.add_argument("--passes", type=int, default=2, help="measurements per stage")
    parser.add_argument("--http", type=int, default=2000, help="memories written over HTTP")
    parser.add_argument("--keep", action="store_true", help="reuse the data directory")
    parser.add_argument("--data-dir", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))

    data_dir = args.data_dir.resolve()
    state_file = data_dir / "state.json"
    if not args.keep or not state_file.exists():
        shutil.rmtree(data_dir, ignore_errors=True)
        data_dir.mkdir(parents=True)
    state = json.loads(state_file.read_text()) if state_file.exists() else None
    baseline_port = free_port()
    baseline = start_baseline(baseline_port)
    stages = []
    try:
        with served(data_dir) as port:
            setup_for(data_dir)
            from _serving_data import user_with_token

            if state is None:
                started = time.perf_counter()
                scopes = layout()
                admin_token = user_with_token("bench")
                people = create_people(Api(port, admin_token), scopes)
                load_rate = write_over_http(Api(port, admin_token), scopes, sizes[0], args.http)
                state = {
                    "admin_token": admin_token,
                    "person_token": people["person_token"],
                    "scopes": [[s.key, s.size_at_full, s.public_id, s.pk] for s in scopes],
                    "largest": scopes[0].public_id,
                    "admin_scopes": 1 + sum(s.key.startswith("team-") for s in scopes),
                    "load_rate": load_rate,
                    "serial": 1,
                    "built": [],
                    "setup_seconds": time.perf_counter() - started,
                }
                state_file.write_text(json.dumps(state))
            scopes = [Scope(*fields) for fields in state["scopes"]]
            state["baseline_port"] = baseline_port
            for size in sizes:
                print(f"stage: {size:,} memories", flush=True)
                started = time.perf_counter()
                built = {entry["size"]: entry for entry in state["built"]}
                if size in built:
                    timings = built[size]["timings"]
                    print("  already built (--keep)")
                else:
                    state["serial"], timings = grow(scopes, size, state["serial"])
                    state["built"].append({"size": size, "timings": timings})
                    state_file.write_text(json.dumps(state))
                state["history_ids"] = history_ids(state["largest"])
                from django.db import connection

                with connection.cursor() as cursor:
                    cursor.execute("SELECT count(*) FROM memories_memory")
                    (memories,) = cursor.fetchone()
                stage = {
                    "size": size,
                    "memories": memories,
                    "largest_count": largest_scope_count(state),
                    "timings": timings,
                }
                # Each pass asks every request again: the first runs on the caches the build
                # left (it evicted the pages the requests read), the later ones on caches the
                # requests warmed, as on a server that has been answering. The summary is the
                # last pass's.
                stage["passes"] = []
                for number in range(1, args.passes + 1):
                    load_before = os.getloadavg()[0]
                    stage["measured"] = measure(port, data_dir, state, args.requests, args.batches)
                    stage["load"] = (load_before, os.getloadavg()[0])
                    stage["pass"] = number
                    report(stage)
                    stage["passes"].append({"measured": stage["measured"], "load": stage["load"]})
                stage["seconds"] = time.perf_counter() - started
                print(f"stage {size:,} took {stage['seconds']:.0f} s", flush=True)
                stages.append(stage)
    finally:
        baseline.kill()
    print()
    print(
        f"written over HTTP at {state['load_rate']:.0f} memories/s; setup "
        f"{state['setup_seconds']:.0f} s"
    )
    for stage in stages:
        stage["first"] = stage["passes"][0]["measured"]
    if args.passes > 1:
        summary(stages, "first")
    summary(stages)
    if args.json:
        args.json.write_text(json.dumps(stages, default=str, indent=1))


if __name__ == "__main__":
    main()
