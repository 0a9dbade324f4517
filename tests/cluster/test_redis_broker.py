"""The django-q2 worker on Redis (ZM_REDIS_URL, a real redis-server) for translation, extraction
and judging; a worker killed mid-task and a Redis restarted while tasks wait lose nothing.

django-q2's Redis broker is a list: enqueue is RPUSH, a worker takes a task with BLPOP, and
nothing acknowledges it. A task a dead worker held, or one waiting in a Redis that restarts
without persistence, is gone from the broker. The database holds the truth (each memory, chunk
and pair is pending under a lease) and the sweepers queue again whatever is due once its lease
is over, so the work is done, once."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import redis as redis_client
from django_q.conf import Conf
from django_q.models import Schedule

from memories.canonical import tasks as translation_tasks
from memories.capture import tasks as capture_tasks
from memories.hygiene import tasks as hygiene_tasks
from memories.models import Chunk, ChunkStatus, Conflict, ConflictStatus, Memory, Provenance
from scripts.zmcluster import llm, services
from scripts.zmcluster.hosts import Host
from tests.fakes.anthropic_api import delay
from tests.memories.canonical_support import Worker, worker_env
from tests.served import free_port, wait_for

LEASE = 3
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(services.missing_packages("redis-server")), reason="no redis-server"),
]


@pytest.fixture
def redis_url(monkeypatch):
    root = Path(tempfile.mkdtemp(prefix="zm-redis-"))
    port = free_port()
    local = Host("local", "127.0.0.1")
    server = services.redis(local, root, port=port)
    url = f"redis://127.0.0.1:{port}/0"
    # This process queues on the same Redis as the worker (settings read ZM_REDIS_URL at start).
    monkeypatch.setattr(Conf, "ORM", None)
    monkeypatch.setattr(Conf, "REDIS", url)
    running = [server]

    def restart() -> None:
        running[0].kill()
        running[0].wait(10)
        running[0] = services.redis(local, root, port=port)

    try:
        yield url, restart
    finally:
        running[0].kill()
        running[0].wait(10)
        shutil.rmtree(root, ignore_errors=True)


def queued(url: str) -> int:
    return redis_client.from_url(url).llen(f"django_q:{Conf.CLUSTER_NAME}:q")


def done(predicate, what: str, worker: Worker, log: Path) -> None:
    def check() -> bool:
        assert worker.process.poll() is None, log.read_text()
        return predicate()

    # A liveness bound, not a timing: each worker here starts fresh, so its first task imports
    # torch and loads the model. Beside the full suite (a cluster drill's hosts starting at the
    # same time) that once took 51 s between a translation's answer and the model's load, and
    # the fake LLM took 3.4 s to answer; a task lost would never be done at all.
    wait_for(check, timeout=180, what=what, interval=0.3)


def translated(memory: Memory) -> bool:
    memory.refresh_from_db()
    return memory.translation_status == "done"


def extracted(chunk: Chunk) -> bool:
    return Chunk.objects.filter(pk=chunk.pk, status=ChunkStatus.EXTRACTED).exists()


def judged() -> bool:
    return not Conflict.objects.filter(status=ConflictStatus.PENDING).exists()


def write(api, tenancy, content: str) -> Memory:
    response = api(tenancy.writer).post(
        "/api/v1/memories",
        {"content": content, "kind": "fact", "scope": tenancy.team.public_id},
        format="json",
    )
    assert response.status_code in (200, 201), response.json()
    return Memory.objects.get(public_id=response.json()["id"])


def ingest(api, tenancy, number: int) -> Chunk:
    body = {"content": llm.chunk_text(number), "source_kind": "transcript", "client": "cli"}
    response = api(tenancy.writer).post("/api/v1/ingest", body, format="json")
    assert response.status_code == 202, response.json()
    return Chunk.objects.get(public_id=response.json()["chunk"]["id"])


def near_duplicates(api, tenancy, number: int) -> None:
    """Two memories the scan pairs for the judge, then the scan (its judge tasks queued)."""
    write(api, tenancy, f"Release {number} of the billing service ships on Monday mornings.")
    write(api, tenancy, f"Release {number} of the billing service ships on Monday morning.")
    hygiene_tasks.scan()


@pytest.mark.django_db(transaction=True)
def test_the_worker_on_redis_loses_nothing(
    kinds_seeded, tenancy, api, fake_anthropic, settings, tmp_path, redis_url
):
    url, restart_redis = redis_url
    settings.EXTRACTION_LEASE_SECONDS = settings.TRANSLATION_LEASE_SECONDS = LEASE
    settings.HYGIENE_LEASE_SECONDS = LEASE
    Schedule.objects.all().delete()  # the test runs the sweepers itself, when it chooses
    fake_anthropic.default = llm.every_job()
    leases = {f"ZM_{kind}_LEASE": str(LEASE) for kind in ("TRANSLATION", "EXTRACTION", "HYGIENE")}
    env = worker_env(fake_anthropic, ZM_REDIS_URL=url, **leases)
    log = tmp_path / "qcluster.log"
    workers = [Worker(env, log)]
    try:
        # Each job through Redis.
        memory = write(api, tenancy, llm.german_text(1))
        chunk = ingest(api, tenancy, 1)
        near_duplicates(api, tenancy, 1)
        done(lambda: translated(memory) and extracted(chunk) and judged(), "jobs", workers[0], log)
        assert memory.content == llm.english_of("1")

        # A worker killed while its extraction call is in flight.
        fake_anthropic.script(delay(60, then=llm.every_job()))
        chunk = ingest(api, tenancy, 2)
        wait_for(lambda: fake_anthropic.pending_steps == 0, timeout=30, what="the call")
        workers[0].kill()
        assert Chunk.objects.get(pk=chunk.pk).status == ChunkStatus.PENDING
        workers.append(Worker(env, log))
        wait_for(capture_tasks.sweep_chunks, timeout=LEASE + 10, what="the sweeper's claim")
        done(lambda: extracted(chunk), "the extraction after the kill", workers[1], log)

        # Tasks waiting in Redis (no worker runs) when Redis restarts: the queue is empty after.
        workers[1].stop()
        memory = write(api, tenancy, llm.german_text(3))
        chunk = ingest(api, tenancy, 3)
        near_duplicates(api, tenancy, 3)
        assert queued(url) >= 3
        restart_redis()
        assert queued(url) == 0
        workers.append(Worker(env, log))

        def swept() -> int:
            sweeps = (translation_tasks.sweep_translations, capture_tasks.sweep_chunks)
            return sum(sweep() for sweep in (*sweeps, hygiene_tasks.sweep_conflicts))

        wait_for(lambda: swept() >= 3, timeout=LEASE + 10, what="the sweepers' claims")
        done(lambda: translated(memory) and extracted(chunk) and judged(), "jobs", workers[2], log)
    finally:
        for worker in workers:
            worker.stop()
    # Every chunk extracted once: one memory each, written once (one provenance row).
    for chunk in Chunk.objects.all():
        assert chunk.status == ChunkStatus.EXTRACTED and chunk.kept == 1, chunk
        assert Provenance.objects.filter(chunk=chunk).count() == 1
    assert Conflict.objects.filter(status=ConflictStatus.CLEARED).count() >= 2
