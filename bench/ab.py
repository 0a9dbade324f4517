"""Recall and build_context over HTTP on two checkouts of zero-memory, in one run.

    .venv/bin/python bench/ab.py BASE HEAD [--data DIR] [--rounds 2]

BASE and HEAD are two checkouts (git worktrees: `git worktree add /tmp/base main`). Each serves
(`manage.py serve`, its own code) a copy of the same loaded LoCoMo data directory, the one
bench/locomo.py leaves under bench/.cache/ (run it once first; both checkouts must have the
migrations that data directory was loaded with). Every question is asked of both servers, in
alternating order, as a `POST /api/v1/recall` (k = 10) and a `POST /api/v1/context`, so both meet
the same load on a shared machine; the first 20 questions of the first round warm up. Prints p50
and p95 of each and HEAD's ratio to BASE's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import _server
from _django import ROOT, percentile
from _locomo import load_conversations
from _server import Api, free_port, stop_server

DEFAULT_DATA = ROOT.parent / "shared" / "locomo" / "locomo-dev.json"
WARM_UP = 20


def copied(source: Path, into: Path) -> Path:
    """A copy of a stopped data directory, owned as the embedded server wants it."""
    shutil.copytree(
        source,
        into,
        ignore=shutil.ignore_patterns("postmaster.pid", "server.log", ".handle_pids.json"),
    )
    owner = (source / "pgdata").stat()
    subprocess.run(
        ["chown", "-R", f"{owner.st_uid}:{owner.st_gid}", str(into / "pgdata")], check=True
    )
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("head", type=Path)
    parser.add_argument("--data", type=Path, help="a loaded data directory (bench/.cache/locomo-*)")
    parser.add_argument("--questions", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = args.data or max((ROOT / "bench" / ".cache").glob("locomo-*/loaded.json")).parent
    _, questions = load_conversations(args.questions)
    state = json.loads((data / "loaded.json").read_text())
    loaded = state["loaded"]
    work = Path(tempfile.mkdtemp(prefix="zm-ab-"))
    servers = {}
    try:
        for name, checkout in (("base", args.base), ("head", args.head)):
            directory = copied(data, work / name)
            _server.ROOT = checkout.resolve()
            port = free_port()
            with (directory / "server.log").open("a") as log:
                servers[name] = (_server.start_server(directory, port, log), port)
            print(f"{name}: {checkout} on port {port}")
        apis = {name: Api(port, state["token"]) for name, (_, port) in servers.items()}
        latencies = {(name, op): [] for name in apis for op in ("recall", "context")}
        for round_number in range(args.rounds):
            for i, question in enumerate(questions):
                scopes = [loaded[question.conversation]["scope"]]
                order = list(apis) if i % 2 == 0 else list(apis)[::-1]
                for name in order:
                    for op, path, body in (
                        ("recall", "/api/v1/recall", {"query": question.text, "k": 10}),
                        ("context", "/api/v1/context", {"topic": question.text}),
                    ):
                        started = time.perf_counter()
                        status, answer = apis[name].call("POST", path, {**body, "scopes": scopes})
                        elapsed = (time.perf_counter() - started) * 1000
                        assert status == 200, answer
                        if round_number or i >= WARM_UP:
                            latencies[(name, op)].append(elapsed)
        for op in ("recall", "context"):
            base, head = latencies[("base", op)], latencies[("head", op)]
            print(
                f"{op:8s} base p50 {statistics.median(base):6.1f} p95 {percentile(base, 95):6.1f}"
                f" | head p50 {statistics.median(head):6.1f} p95 {percentile(head, 95):6.1f}"
                f" | head/base p50 {statistics.median(head) / statistics.median(base):.3f}"
                f" p95 {percentile(head, 95) / percentile(base, 95):.3f} (n = {len(base)})"
            )
    finally:
        for server, _ in servers.values():
            stop_server(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
