"""The watcher against a server started as `make run` starts it (its own data directory and
port), run as users run it: `python3 watcher/zm_watch.py` in its own process, over HTTP.

    python bench/watcher.py [--sessions 60] [--turns 200]

1. baseline, same run: `POST /api/v1/ingest` of 16,000-character chunks over one keep-alive
   connection from this process (what the server accepts when nothing else is in the way);
2. `zm-watch run --once` over N Claude Code sessions of an allowed project: chunks per second
   delivered (spool written and fsynced, offsets saved after each answer), and its CPU time;
3. `zm-watch hook` for a Stop event, repeated: how long it takes to return (its child sends);
4. `zm-watch run` left running for 30 s over the same transcripts, all delivered: CPU time.
No LLM key is configured: chunks wait as `waiting_for_key`, extraction is not measured here
(bench/ingest.py does).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from _django import ROOT, describe
from _server import Api, served
from ingest import issue_token

SCRIPT = ROOT / "watcher" / "zm_watch.py"
PYTHON3 = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else shutil.which("python3")


def sessions(home: Path, project: Path, count: int, turns: int) -> list[Path]:
    folder = home / ".claude" / "projects" / str(project).replace("/", "-")
    folder.mkdir(parents=True)
    paths = []
    for number in range(count):
        path = folder / f"session-{number}.jsonl"
        with path.open("w") as out:
            for turn in range(turns):
                role = "user" if turn % 2 == 0 else "assistant"
                text = f"Session {number} turn {turn}: " + " ".join(
                    f"the deploy step {turn * 7 + i} waits for the queue" for i in range(8)
                )
                content = text if role == "user" else [{"type": "text", "text": text}]
                entry = {"type": role, "message": {"role": role, "content": content}}
                out.write(json.dumps({**entry, "cwd": str(project), "sessionId": f"s{number}"}))
                out.write("\n")
        paths.append(path)
    return paths


def watcher(home: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "NO_PROXY": "127.0.0.1"}
    return subprocess.run(
        [PYTHON3, str(SCRIPT), *args], env=env, capture_output=True, text=True, **kwargs
    )


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="zm-watcher-bench-"))
    data_dir, home = root / "server", root / "home"
    project = home / "src" / "shop"
    (project / ".git").mkdir(parents=True)
    paths = sessions(home, project, args.sessions, args.turns)
    data_dir.mkdir()
    with served(data_dir) as port:
        token = issue_token(data_dir)
        config = home / ".config" / "zero-memory" / "watcher.json"
        config.parent.mkdir(parents=True)
        url = f"http://127.0.0.1:{port}"
        config.write_text(json.dumps({"url": url, "token": token, "allow": [str(project)]}))
        config.chmod(0o600)

        api = Api(port, token)
        baseline, began = [], time.perf_counter()
        for number in range(100):
            body = {"content": f"baseline {number} " + "x y z " * 2666, "source_kind": "transcript"}
            started = time.perf_counter()
            status, answer = api.call("POST", "/api/v1/ingest", body)
            baseline.append((time.perf_counter() - started) * 1000)
            assert status == 202, answer
        baseline_rate = len(baseline) / (time.perf_counter() - began)

        from memories.models import Chunk

        cpu, began = children_cpu(), time.perf_counter()
        done = watcher(home, "run", "--once", timeout=3600)
        elapsed, run_cpu = time.perf_counter() - began, children_cpu() - cpu
        assert done.returncode == 0, done.stderr[-2000:]
        delivered = Chunk.objects.exclude(content__startswith="baseline").count()

        event = json.dumps({"transcript_path": str(paths[0]), "hook_event_name": "Stop"})
        hooks = []
        for _ in range(30):
            started = time.perf_counter()
            watcher(home, "hook", input=event, timeout=60)
            hooks.append((time.perf_counter() - started) * 1000)
            time.sleep(0.2)

        cpu = children_cpu()
        running = subprocess.Popen(
            [PYTHON3, str(SCRIPT), "run"],
            env={"HOME": str(home), "PATH": os.environ["PATH"], "NO_PROXY": "127.0.0.1"},
            stderr=subprocess.DEVNULL,
        )
        time.sleep(30)
        running.terminate()
        running.wait(timeout=30)
        idle_cpu = children_cpu() - cpu
    size = sum(path.stat().st_size for path in paths)
    print(
        f"watcher bench: {args.sessions} Claude Code sessions, {args.turns} turns, {size >> 10} KiB"
    )
    print(f"  baseline POST /api/v1/ingest, keep-alive  {describe(baseline)}")
    print(f"                                            {baseline_rate:6.1f} chunks/s")
    print(
        f"  zm-watch run --once                       {delivered} chunks in {elapsed:.1f} s"
        f"   {delivered / elapsed:6.1f} chunks/s   CPU {run_cpu:.1f} s"
    )
    print(f"  zm-watch hook (returns)                   {describe(hooks)}")
    print(f"  zm-watch run, 30 s, all delivered         CPU {idle_cpu:.2f} s")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
