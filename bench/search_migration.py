"""How long migration memories.0034 (the search copy partitioned by scope) takes on a data set,
and what it locks while it runs.

    .venv/bin/python bench/search_migration.py [--data-dir bench/.cache/scale]

On a data directory bench/scale.py built (stop that bench first): the migration is undone
(`migrate memories 0033`: the search copy dropped, memories_memory's HNSW and GIN indexes built
again; timed, not the figure), then applied (`migrate memories 0034`, timed). While it runs,
another connection tries every second a read of a memory and an update of one (each with a lock
timeout of 500 ms, the update rolled back), and the bench prints when each waited.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from _django import setup_for

ROOT = Path(__file__).resolve().parent.parent
PROBE_EVERY = 1.0


def migrate(data_dir: Path, target: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "memories", target, "-v", "0"],
        cwd=ROOT,
        env={**os.environ, "ZM_DATA_DIR": str(data_dir)},
        check=True,
    )
    return time.perf_counter() - started


def connect():
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold"):
        params.pop(name, None)
    return psycopg.connect(**params, autocommit=True)


READ = "SELECT content FROM memories_memory WHERE id = %s"
WRITE = "UPDATE memories_memory SET recall_count = recall_count WHERE id = %s"


def attempt(cursor, statement: str, memory_id: int) -> bool:
    """Whether `statement` ran within the lock timeout (rolled back either way)."""
    import psycopg

    try:
        cursor.execute("BEGIN")
        cursor.execute("SET LOCAL lock_timeout = '500ms'")
        cursor.execute(statement, [memory_id])
        return True
    except psycopg.errors.LockNotAvailable:
        return False
    finally:
        cursor.execute("ROLLBACK")


def probe(memory_id: int, started: float, done: threading.Event, seen: list) -> None:
    with connect() as connection, connection.cursor() as cursor:
        while not done.is_set():
            at = time.perf_counter() - started
            read = attempt(cursor, READ, memory_id)
            write = attempt(cursor, WRITE, memory_id)
            seen.append((at, read, write))
            time.sleep(PROBE_EVERY)


def spans(seen: list, column: int) -> str:
    """The stretches of time (s from the start) when the probe's statement waited."""
    stretches, start = [], None
    for at, *ok in seen:
        if not ok[column - 1] and start is None:
            start = at
        elif ok[column - 1] and start is not None:
            stretches.append((start, at))
            start = None
    if start is not None:
        stretches.append((start, seen[-1][0]))
    return ", ".join(f"{a:.0f}-{b:.0f} s" for a, b in stretches) or "never"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "bench" / ".cache" / "scale")
    args = parser.parse_args()
    setup_for(args.data_dir)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), max(id) FROM memories_memory")
        memories, memory_id = cursor.fetchone()
    print(f"{memories:,} memories in {args.data_dir}", flush=True)
    undone = migrate(args.data_dir, "0033")
    print(f"undone (0033: the one table's indexes built again) in {undone:.0f} s", flush=True)
    seen: list = []
    done = threading.Event()
    started = time.perf_counter()
    prober = threading.Thread(target=probe, args=(memory_id, started, done, seen))
    prober.start()
    seconds = migrate(args.data_dir, "0034")
    done.set()
    prober.join()
    print(
        f"migration memories.0034 over {memories:,} memories: {seconds:.0f} s"
        f" ({seconds / memories * 1e6:.0f} s per million)"
    )
    print(f"  a read of a memory waited: {spans(seen, 1)}")
    print(f"  an update of a memory waited: {spans(seen, 2)}")
    print(f"  ({len(seen)} probes, one a second)")


if __name__ == "__main__":
    main()
