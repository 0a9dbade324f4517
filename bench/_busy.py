"""What bench/busy.py needs around the server: the fake LLM, the worker's queue and processes,
py-spy on the web processes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


def fake_llm():
    """The suite's fake Messages API: translations echo the text, the judge says unrelated."""
    from tests.fakes.anthropic_api import FakeAnthropicAPI, Step, malformed_tool_input

    def answer(request, stopping):
        body = request.json if isinstance(request.json, dict) else {}
        tool = (body.get("tool_choice") or {}).get("name", "")
        prompt = str(body.get("messages", [{}])[0].get("content", ""))
        if tool == "record_english_text":
            text = re.search(r"<memory>\n(.*)\n</memory>", prompt, re.S)
            reply = {"english": text.group(1) if text else prompt}
        else:  # the judge (several numbered pairs a call): nothing to resolve, all cleared
            pairs = prompt.count("<pair number=")
            verdict = {"relation": "unrelated", "confidence": 0.9, "rationale": "bench"}
            reply = {"relations": [{"pair": n, **verdict} for n in range(1, pairs + 1)]}
        # The suite's step for a tool call with the input as given (here a well-formed one).
        return malformed_tool_input(reply).answer(request, stopping)

    fake = FakeAnthropicAPI(default=Step("bench", answer))
    fake.start()
    return fake


def load_average() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def queue_depth() -> dict[str, int]:
    from django_q.models import OrmQ

    from memories.models import Conflict, ConflictStatus, Memory, TranslationStatus

    return {
        "tasks queued": OrmQ.objects.count(),
        "pairs for the judge": Conflict.objects.filter(status=ConflictStatus.PENDING).count(),
        "translations pending": Memory.objects.filter(
            translation_status=TranslationStatus.PENDING
        ).count(),
    }


def drain(timeout: float, *, after: float) -> tuple[float | None, dict[str, int]]:
    """Seconds until the queue is empty and a scan begun after `after` (a Unix time) has
    finished (None past `timeout`), and what is left then."""
    from datetime import UTC, datetime

    from memories.models import HygieneScan

    since = datetime.fromtimestamp(after, tz=UTC)
    started = time.perf_counter()
    while True:
        left = queue_depth()
        scanned = HygieneScan.objects.filter(started_at__gte=since, finished_at__isnull=False)
        if not any(left.values()) and scanned.exists():
            return time.perf_counter() - started, left
        if time.perf_counter() - started > timeout:
            return None, left
        time.sleep(1)


@contextmanager
def worker_paused(server_pid: int):
    """The worker's whole process group stopped (SIGSTOP) for the block: no background work.
    Stopped again after `serve`'s longest stop of its own (zeromemory.conductor), which, had it
    stopped the worker at that moment, continued it at its end; from then on `serve` leaves a
    group it finds stopped alone."""
    import psutil

    [worker] = [
        proc
        for proc in psutil.Process(server_pid).children()
        if "qcluster" in " ".join(proc.cmdline())
    ]
    os.killpg(worker.pid, signal.SIGSTOP)
    longest = int(os.environ.get("ZM_FOREGROUND_STOP_MS") or 100) / 1000
    if longest:
        time.sleep(longest + 0.1)
        os.killpg(worker.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(worker.pid, signal.SIGCONT)


def worker_cpu_seconds(server_pid: int) -> float:
    import psutil

    total = 0.0
    for proc in psutil.Process(server_pid).children(recursive=True):
        try:
            if "qcluster" in " ".join(proc.cmdline()):
                times = proc.cpu_times()
                total += times.user + times.system
        except psutil.Error:
            continue
    return total


def web_pids(server_pid: int) -> list[int]:
    import psutil

    found = psutil.Process(server_pid).children()
    return [proc.pid for proc in found if "zeromemory.web" in " ".join(proc.cmdline())]


def server_pids(port: int) -> list[int]:
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "serve" in cmdline and str(port) in cmdline:
            found.append(proc.pid)
    return found


def shares_a_web_process(server_pid: int, port: int, client_port: int) -> bool | None:
    """Whether the timed client's connection (its local port `client_port`) and another
    client's (the busy writer's) are served by the same web process: the kernel hands each new
    connection to whichever web process accepts first, and a recall beside the writer's batch in
    its own process waits for the interpreter, beside it in another only for a core. None when
    the connections are not found."""
    import psutil

    holders: dict[int, set[int]] = {}  # client port -> web processes holding its connection
    for pid in web_pids(server_pid):
        try:
            connections = psutil.Process(pid).net_connections(kind="tcp")
        except psutil.Error:
            continue
        for connection in connections:
            if connection.laddr and connection.laddr.port == port and connection.raddr:
                holders.setdefault(connection.raddr.port, set()).add(pid)
    mine = holders.pop(client_port, set())
    others = set().union(*holders.values()) if holders else set()
    if not mine or not others:
        return None
    return bool(mine & others)


def record(pids: list[int], output: Path, seconds: float, rate: int) -> list[subprocess.Popen]:
    """py-spy recording each of `pids` for `seconds` at `rate` samples/s, as collapsed stacks
    in <output stem>-<pid>.txt beside `output`."""
    py_spy = Path(sys.executable).with_name("py-spy")
    return [
        subprocess.Popen(
            [
                str(py_spy),
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(max(1, round(seconds))),
                "--rate",
                str(rate),
                "--format",
                "raw",
                "--nonblocking",
                "--output",
                str(output.with_name(f"{output.stem}-{pid}.txt")),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for pid in pids
    ]


def profile(folder: Path | None, pids: list[int], seconds: float) -> list[subprocess.Popen]:
    if folder is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    return record(pids, folder / "web.txt", seconds, rate=200)


def model_ceiling(*, short: list[str], chat: list[str]) -> dict[str, float]:
    """What the embedding model alone computes on this machine, in this process, with the threads
    one web process gives a text (memories.embeddings): a bound that no request which embeds can
    beat. Called while the server is idle. Returns ms for one short text and texts per second
    for a batch of short and of chat-length texts, per process and for every web process at
    once (at best: each on its own core, nothing else running)."""
    import statistics

    from django.conf import settings

    from memories.embeddings import embed_texts

    def seconds(texts: list[str], times: int) -> float:
        embed_texts(texts)  # warm
        spent = []
        for _ in range(times):
            started = time.perf_counter()
            embed_texts(texts)
            spent.append(time.perf_counter() - started)
        return statistics.median(spent)

    processes = min(settings.WEB_PROCESSES, os.cpu_count() or 1)
    one = seconds(short[:1], 20)
    shorts, chats = len(short) / seconds(short, 3), len(chat) / seconds(chat, 3)
    return {
        "one short (ms)": one * 1000,
        "short per process (/s)": shorts,
        "short, all web processes (/s)": shorts * processes,
        "chat per process (/s)": chats,
        "chat, all web processes (/s)": chats * processes,
    }
