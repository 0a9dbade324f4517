"""Export over HTTP: memories per second and the server's memory while it streams the zip.

    .venv/bin/python bench/export.py [--memories 100000] [--runs 1] [--fresh]

Starts `manage.py serve` as `make run` does, with its own data directory
(bench/.cache/export-<memories>/, kept for the next run). The first time, it fills the caller's
personal scope with memories straight in SQL (export reads no embedding, so none is computed:
writing 100,000 through the API would take the embedding model an hour here), each with a
provenance row and a validity period, every tenth forgotten, every tenth other one with a
version, one in seven translated. Then it downloads `GET /api/v1/scopes/{id}/export` from this
process `--runs` times and prints memories per second (each run and the median), the time to
the first byte, and the peak resident memory of the server's Python processes (web, worker),
sampled every 20 ms, beside their idle baseline measured just before in the same run, in all
and per process. Each archive is checked (manifest, counts).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import io
import json
import os
import statistics
import threading
import time
import zipfile

import psutil
from _django import setup_for
from _server import served
from _serving_data import CACHE, user_with_token

SEED = """
INSERT INTO memories_memory (
    public_id, scope_id, kind_id, content, content_original, content_lang, content_hash,
    content_revision, translation_status, translation_attempts, translation_error,
    translation_claim, author_kind, agent_name, forgotten_at, forgotten_reason,
    recall_count, valid_from, valid_until, validity_gaps, created_at, updated_at
)
SELECT
    'mem_' || lpad(to_hex(i), 26, '0'), %(scope)s,
    (ARRAY['fact', 'decision', 'convention'])[1 + i %% 3],
    'Service ' || i || ' answers on port ' || (1000 + i %% 50000) || ' and logs to /var/log/s'
        || i || '.log; its owners rotate the keys every ' || (1 + i %% 90) || ' days.',
    CASE WHEN i %% 7 = 0 THEN 'Der Dienst ' || i || ' antwortet auf Port ' || i ELSE '' END,
    CASE WHEN i %% 7 = 0 THEN 'de' ELSE 'en' END,
    md5('bench-' || i), 1, CASE WHEN i %% 7 = 0 THEN 'done' ELSE 'skipped' END, 0, '', '',
    'agent', 'bench',
    CASE WHEN i %% 10 = 0 THEN now() END, CASE WHEN i %% 10 = 0 THEN 'Retired.' ELSE '' END,
    0, now() - make_interval(secs => i), CASE WHEN i %% 10 = 0 THEN now() END, false,
    now() - make_interval(secs => i), now()
FROM generate_series(1, %(n)s) AS i
"""
PROVENANCE = """
INSERT INTO memories_provenance (
    memory_id, source_kind, absorbed, client_name, conversation_id, source_path, chunk_hash,
    verbatim, written_text, author_name, created_at
)
SELECT id, 'remember', false, 'bench', 'conv-' || (id %% 100), 'src/app.py', '',
    CASE WHEN id %% 7 = 0 THEN 'Port ' || id ELSE '' END, '', '', created_at
FROM memories_memory WHERE scope_id = %(scope)s
"""
VERSIONS = """
INSERT INTO memories_memoryversion (
    memory_id, number, kind_id, content, content_original, content_lang, created_at
)
SELECT id, 1, kind_id, 'An earlier text of ' || public_id, '', 'en', created_at
FROM memories_memory WHERE scope_id = %(scope)s AND id %% 10 = 3
"""
PERIODS = """
INSERT INTO memories_validityperiod (memory_id, valid_from, valid_until, started, ended)
SELECT id, valid_from, valid_until, 'created', CASE WHEN valid THEN '' ELSE 'forgotten' END
FROM memories_memory WHERE scope_id = %(scope)s
"""


def seed(memories: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    token = user_with_token("exporter")
    scope = get_user_model().objects.get(username="exporter").owned_scopes.get(kind="personal")
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for statement in (SEED, PROVENANCE, VERSIONS, PERIODS):
            cursor.execute(statement, {"scope": scope.pk, "n": memories})
        cursor.execute("ANALYZE")
    print(f"  seeded {memories} memories in SQL in {time.perf_counter() - started:.0f} s")
    return {"token": token, "scope": scope.public_id, "memories": memories}


def python_tree() -> list[psutil.Process]:
    """The server's Python processes (web and worker), not its PostgreSQL."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "python" in child.name().lower() or "python" in " ".join(child.cmdline()[:1]):
                found.append(child)
        except psutil.Error:
            pass
    return found


def rss_mb(processes: list[psutil.Process]) -> dict[int, float]:
    """Resident memory of each process, by pid (a process that ended counts nothing)."""
    found = {}
    for process in processes:
        with contextlib.suppress(psutil.Error):
            found[process.pid] = process.memory_info().rss / 1_048_576
    return found


def label(process: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        command = " ".join(process.cmdline())
        for name in ("zeromemory.web", "qcluster", "serve"):
            if name in command:
                return {"zeromemory.web": "web", "qcluster": "worker"}.get(name, name)
    return "python"


class Sampler(threading.Thread):
    """Every 20 ms: the sum of the processes' resident memory, its peak, and each one's peak."""

    def __init__(self, processes: list[psutil.Process]) -> None:
        super().__init__(daemon=True)
        self.processes, self.peak, self.done = processes, 0.0, threading.Event()
        self.each: dict[int, float] = {}

    def run(self) -> None:
        while not self.done.is_set():
            now = rss_mb(self.processes)
            self.peak = max(self.peak, sum(now.values()))
            for pid, mb in now.items():
                self.each[pid] = max(self.each.get(pid, 0.0), mb)
            time.sleep(0.02)


def download(port: int, state: dict) -> tuple[float, float, bytes]:
    """Seconds to the first byte of the body, seconds to the last, and the body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    headers = {"Authorization": f"Bearer {state['token']}"}
    started = time.perf_counter()
    connection.request("GET", f"/api/v1/scopes/{state['scope']}/export", headers=headers)
    response = connection.getresponse()
    assert response.status == 200, response.read()[:300]
    body = io.BytesIO()
    first = None
    while chunk := response.read(1 << 16):
        first = first or time.perf_counter() - started
        body.write(chunk)
    return first or 0.0, time.perf_counter() - started, body.getvalue()


def check(data: bytes, state: dict) -> int:
    """The archive holds every memory: the manifest's counts and the number of entries."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        files = len(archive.infolist())
    [scope] = manifest["scopes"]
    assert scope["memories"] + scope["archived"] == state["memories"], scope
    assert files == state["memories"] + 2, files
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--runs", type=int, default=1, help="downloads in a row (median)")
    args = parser.parse_args()
    data_dir = CACHE / f"export-{args.memories}"
    state_file = data_dir / "seeded.json"
    if args.fresh and data_dir.exists():
        import shutil

        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    print(f"load before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min)")
    with served(data_dir) as port:
        setup_for(data_dir)
        state = json.loads(state_file.read_text()) if state_file.exists() else None
        if state is None:
            state = seed(args.memories)
            state_file.write_text(json.dumps(state))
        processes = python_tree()
        names = {process.pid: label(process) for process in processes}
        time.sleep(2)
        # One request first: the code is loaded and the connection warm before the baseline.
        download_small = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        download_small.request(
            "GET", "/api/v1/me", headers={"Authorization": f"Bearer {state['token']}"}
        )
        download_small.getresponse().read()
        idle = rss_mb(processes)
        sampler = Sampler(processes)
        sampler.start()
        runs = []
        for _ in range(args.runs):
            first, seconds, data = download(port, state)
            files = check(data, state)
            runs.append((first, seconds, len(data)))
            del data
        sampler.done.set()
        sampler.join()
    for number, (first, seconds, _) in enumerate(runs, 1):
        print(
            f"export {number} of {state['memories']} memories over HTTP: {seconds:.1f} s, "
            f"{state['memories'] / seconds:.0f} memories/s, first byte after {first:.2f} s"
        )
    middle = statistics.median(seconds for _, seconds, _ in runs)
    print(f"  median of {len(runs)}: {state['memories'] / middle:.0f} memories/s")
    print(f"  archive: {runs[0][2] / 1_048_576:.1f} MB, {files} files")
    total = sum(idle.values())
    print(
        f"  server RSS (Python processes): idle {total:.0f} MB, peak {sampler.peak:.0f} MB, "
        f"{sampler.peak - total:.0f} MB above idle"
    )
    for process in processes:
        if process.pid in idle:
            grown = sampler.each.get(process.pid, 0.0) - idle[process.pid]
            mb = idle[process.pid]
            print(f"    {names[process.pid]} {process.pid}: idle {mb:.0f} MB, +{grown:.0f} MB")
    print("  targets: >= 2000 memories/s, < 100 MB above idle")
    print(f"load after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1 and 5 min)")


if __name__ == "__main__":
    main()
