"""Import from another system: 100,000 mem0 records through `manage.py import_from`, its rate
beside the embedding model's own rate for the same texts, and its memory above idle.

    .venv/bin/python bench/import_from.py [--records 100000] [--floor 4000]

Starts `manage.py serve` as `make run` does (its embedded PostgreSQL, web and worker), with a
fresh data directory (bench/.cache/import-from-<records>/). Writes a mem0 `get_all()` file of
`--records` generated memories (varied engineering-team texts from templates and word lists made
here, users, agents, runs, metadata, every tenth with mem0 history rows), then:

1. the floor: the embedding model alone in this process on `--floor` of the same texts, in the
   import's batches (256), with the threads a web process gives it;
2. idle: `manage.py import_from` of a one-record file, its peak resident memory (Django and the
   model loaded: what any import process holds);
3. the import: `manage.py import_from` of the whole file (the door for a file larger than one
   request embeds), its wall time, records/s, and its peak resident memory sampled every 20 ms.

Prints records/s beside the floor (target >= 0.6x) and the peak above idle (target < 200 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
from _django import ROOT, setup_for
from _server import served
from _serving_data import CACHE, user_with_token

PEOPLE = [
    "Ayla",
    "Bram",
    "Chen",
    "Dara",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kemal",
    "Lena",
    "Mika",
    "Nadia",
    "Oskar",
    "Pia",
    "Quinn",
    "Rosa",
    "Sami",
    "Tess",
]
SERVICES = [
    "billing",
    "search",
    "checkout",
    "ledger",
    "gateway",
    "scheduler",
    "notifier",
    "inventory",
    "auth",
    "reporting",
    "media",
    "exporter",
    "crawler",
    "sync",
]
TOOLS = [
    "Terraform",
    "Helm",
    "Bazel",
    "pnpm",
    "Poetry",
    "Kafka",
    "Redis",
    "Nginx",
    "Vault",
    "Grafana",
    "Sentry",
    "ClickHouse",
    "SQLite",
    "RabbitMQ",
    "Celery",
    "Vite",
]
TEMPLATES = [
    "{p} prefers {t} over the old setup for the {s} service.",
    "The {s} service retries failed calls {n} times with exponential backoff.",
    "Deploys of {s} happen on {d} after the {h}:00 standup; {p} approves them.",
    "{p} asked that pull requests touching {s} get two reviewers from the platform team.",
    "The {s} database is vacuumed nightly at {h}:30 and keeps {n} days of snapshots.",
    "Do not bump {t} in the {s} repo past the pinned version: the {n}.x release broke the build.",
    "{p} is on call for {s} during week {n}; escalations go to {q}.",
    "The {s} API times out after {n} seconds; long exports should use the async endpoint.",
    "Config for {s} lives in infra/{s}/values.yaml and is rendered by {t}.",
    "{p} decided to move {s} logs to {t} because the old pipeline dropped lines under load.",
    "Feature flags for {s} are cleaned up every {d}; stale ones older than {n} days are removed.",
    "The {s} team writes migrations backwards compatible for {n} releases.",
    "{p} likes short summaries at the top of incident reports, with timestamps in UTC.",
    "Integration tests of {s} need {t} running locally on port {port}.",
    "When {s} is slow, check the {t} dashboard first; {q} owns the alerts.",
]
DAYS = ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays"]


def texts(count: int, rng: random.Random) -> list[str]:
    made = []
    for index in range(count):
        text = rng.choice(TEMPLATES).format(
            p=rng.choice(PEOPLE),
            q=rng.choice(PEOPLE),
            s=rng.choice(SERVICES),
            t=rng.choice(TOOLS),
            n=rng.randint(2, 90),
            h=rng.randint(7, 18),
            d=rng.choice(DAYS),
            port=rng.randint(3000, 9999),
        )
        if rng.random() < 0.3:  # some longer ones, as mem0 keeps them
            text += " " + rng.choice(TEMPLATES).format(
                p=rng.choice(PEOPLE),
                q=rng.choice(PEOPLE),
                s=rng.choice(SERVICES),
                t=rng.choice(TOOLS),
                n=rng.randint(2, 90),
                h=rng.randint(7, 18),
                d=rng.choice(DAYS),
                port=rng.randint(3000, 9999),
            )
        made.append(f"{text} (ref {index})" if rng.random() < 0.5 else text)
    return made


def mem0_file(path: Path, contents: list[str], rng: random.Random) -> None:
    """A mem0 get_all() file, written as a stream (it is as large as the records)."""
    with path.open("w") as out:
        out.write('{"results": [')
        for index, content in enumerate(contents):
            created = f"2025-{1 + index % 12:02d}-{1 + index % 28:02d}T{index % 24:02d}:00:00+00:00"
            item = {
                "id": f"{rng.getrandbits(128):032x}",
                "memory": content,
                "hash": f"{rng.getrandbits(128):032x}",
                "metadata": {"source": "chat", "team": rng.choice(SERVICES)},
                "created_at": created,
                "updated_at": created,
                "user_id": rng.choice(PEOPLE).lower(),
                "agent_id": rng.choice(["assistant", "reviewer", None]),
                "run_id": f"run-{index % 500}" if index % 3 == 0 else None,
            }
            if index % 10 == 0:
                item["history"] = [
                    {
                        "id": f"h{index}",
                        "memory_id": item["id"],
                        "old_memory": None,
                        "new_memory": content,
                        "event": "ADD",
                        "created_at": created,
                        "updated_at": created,
                        "is_deleted": False,
                    }
                ]
            out.write(("," if index else "") + json.dumps(item))
        out.write("]}")


def model_rate(contents: list[str]) -> float:
    from memories.embeddings import embed_texts

    embed_texts(contents[:64])  # warm
    started = time.perf_counter()
    for start in range(0, len(contents), 256):
        embed_texts(contents[start : start + 256])
    return len(contents) / (time.perf_counter() - started)


def run_import(path: Path, data_dir: Path, scope: str) -> tuple[float, float, str]:
    """Seconds, peak resident MB of the command's process, and its last line."""
    env = dict(os.environ, ZM_DATA_DIR=str(data_dir), ZM_LOG_LEVEL="WARNING")
    env.pop("DATABASE_URL", None)
    command = [
        sys.executable,
        "manage.py",
        "import_from",
        "mem0",
        str(path),
        "--user",
        "importer",
        "--scope",
        scope,
    ]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    watched = psutil.Process(process.pid)
    peak = [0.0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            try:
                peak[0] = max(peak[0], watched.memory_info().rss / 1_048_576)
            except psutil.Error:
                return
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = process.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    assert process.returncode == 0, output
    return seconds, peak[0], output.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--floor", type=int, default=4000, help="texts the model floor embeds")
    args = parser.parse_args()
    data_dir = CACHE / f"import-from-{args.records}"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    rng = random.Random(43)
    contents = texts(args.records, rng)
    path = data_dir / "mem0.json"
    mem0_file(path, contents, rng)
    tiny = data_dir / "one.json"
    mem0_file(tiny, ["A single record to measure the idle import process."], rng)
    print(
        f"file: {args.records} records, {path.stat().st_size / 1_048_576:.1f} MB, "
        f"{sum(map(len, contents)) / len(contents):.0f} characters on average"
    )
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min)")
    with served(data_dir):
        setup_for(data_dir)
        from django.contrib.auth import get_user_model

        user_with_token("importer")
        user = get_user_model().objects.get(username="importer")
        scope = user.owned_scopes.get(kind="personal").public_id
        floor = model_rate(rng.sample(contents, min(args.floor, len(contents))))
        print(f"model alone: {floor:.0f} texts/s (batches of 256, {args.floor} texts)")
        _seconds, idle, _line = run_import(tiny, data_dir, scope)
        print(f"idle import process (one record): peak {idle:.0f} MB")
        seconds, peak, line = run_import(path, data_dir, scope)
    rate = args.records / seconds
    print(
        f"import of {args.records} records: {seconds:.0f} s, {rate:.0f} records/s "
        f"({rate / floor:.2f}x the model alone), peak {peak:.0f} MB, "
        f"{peak - idle:.0f} MB above idle"
    )
    print(f"  {line}")
    print("  targets: >= 0.6x the model's rate, < 200 MB above idle")
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min)")


if __name__ == "__main__":
    main()
