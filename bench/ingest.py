"""Ingest over real HTTP, and the server side of extraction, against a server started as `make
run` starts it (its own data directory and port).

    python bench/ingest.py [--chunks 1000] [--chars 16000]

1. `GET /healthz` on the same keep-alive connection, as the baseline of the HTTP stack;
2. `POST /api/v1/ingest` of N transcript chunks of about 16,000 characters each: p50 / p95 and
   chunks per second accepted (the LLM is never on this path);
3. extraction: the server's workers extract every chunk through the real anthropic SDK against
   the suite's fake Messages API (tests/fakes/), which answers at once, so the figure is the
   server side alone (gates, remember, embedding, canonical checks), the LLM's own time excluded.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _django import ROOT, describe, percentile
from _server import Api, served

sys.path.insert(0, str(ROOT))

WORDS = [
    "the",
    "deploy",
    "pipeline",
    "runs",
    "the",
    "migrations",
    "before",
    "the",
    "web",
    "processes",
    "restart",
    "and",
    "the",
    "queue",
    "workers",
    "drain",
    "their",
    "tasks",
    "while",
    "the",
    "release",
    "notes",
    "mention",
    "the",
    "feature",
    "flags",
    "for",
    "billing",
]


def chunk_text(number: int, chars: int, rng: random.Random) -> str:
    """A transcript-like chunk holding one decision the fake extractor will find."""
    decision = f"user: From now on service-{number} deploys only after the smoke tests pass."
    lines = [decision]
    while sum(len(line) + 1 for line in lines) < chars:
        speaker = rng.choice(("user", "assistant"))
        lines.append(f"{speaker}: " + " ".join(rng.choice(WORDS) for _ in range(18)) + ".")
    return "\n".join(lines)[:chars]


def candidates_from(request_json) -> list[dict]:
    """The fake extractor: one decision per chunk, its evidence copied from the chunk."""
    text = request_json["messages"][0]["content"]
    match = re.search(r"service-(\d+) deploys only after the smoke tests pass", text)
    if match is None:
        return []
    return [
        {
            "content": f"Service-{match.group(1)} deploys only after the smoke tests pass.",
            "kind": "decision",
            "confidence": 0.95,
            "evidence": match.group(0),
        }
    ]


def issue_token(data_dir: Path) -> str:
    os.environ["ZM_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from scopes.services import token_create
    from zeromemory.core.actor import Actor

    user = get_user_model().objects.create_user("bench", password="bench-password-1")
    return token_create(actor=Actor(user=user), name="ingest-bench").secret


def wait_extracted(count: int, timeout: float) -> float:
    """Seconds until every chunk is extracted (polled in the database)."""
    from memories.models import Chunk, ChunkStatus

    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        done = Chunk.objects.filter(status=ChunkStatus.EXTRACTED).count()
        if done >= count:
            return time.perf_counter() - started
        time.sleep(0.5)
    raise SystemExit(f"only {done} of {count} chunks extracted in {timeout:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--chars", type=int, default=16_000)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()

    from tests.fakes.anthropic_api import FakeAnthropicAPI, memories_answer_from

    fake = FakeAnthropicAPI(default=memories_answer_from(candidates_from))
    fake.start()
    data_dir = Path(tempfile.mkdtemp(prefix="zm-ingest-bench-"))
    os.environ.update(
        ANTHROPIC_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=fake.url,
        ZM_EXTRACTION_DAILY_TOKENS="0",
        NO_PROXY="127.0.0.1,localhost",
    )
    try:
        with served(data_dir) as port:
            api = Api(port, issue_token(data_dir))
            healthz = []
            for _ in range(200):
                started = time.perf_counter()
                api.call("GET", "/healthz")
                healthz.append((time.perf_counter() - started) * 1000)
            rng = random.Random(7)
            texts = [chunk_text(n, args.chars, rng) for n in range(args.chunks)]
            latencies, began = [], time.perf_counter()
            for number, text in enumerate(texts):
                body = {
                    "content": text,
                    "source_kind": "transcript",
                    "client": "bench",
                    "conversation_id": f"bench-{number // 10}",
                }
                started = time.perf_counter()
                status, answer = api.call("POST", "/api/v1/ingest", body)
                latencies.append((time.perf_counter() - started) * 1000)
                if status != 202:
                    raise SystemExit(f"ingest answered {status}: {answer}")
            accepted = time.perf_counter() - began
            extraction = wait_extracted(args.chunks, args.timeout)
            from memories.models import Memory

            memories = Memory.objects.count()
    finally:
        fake.stop()
    print(f"ingest bench: {args.chunks} chunks of {args.chars} characters, 1 client, keep-alive")
    print(f"  GET /healthz (baseline)    {describe(healthz)}")
    print(
        f"  POST /api/v1/ingest        {describe(latencies)}"
        f"   {args.chunks / accepted:6.1f} chunks/s accepted"
    )
    total = accepted + extraction
    print(
        f"  extraction, server side    {args.chunks / total:6.1f} chunks/s "
        f"(all extracted {extraction:.1f} s after the last ingest answer; the fake LLM answers "
        "at once)"
    )
    print(f"  memories written           {memories}  (fake calls: {len(fake.requests)})")
    print(
        f"  median ingest / median healthz: "
        f"{statistics.median(latencies) / statistics.median(healthz):.1f}x;"
        f" p99 ingest {percentile(latencies, 99):.2f} ms"
    )
    shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
