"""A real django-q2 worker killed with SIGKILL while its extraction call is in flight: nothing is
lost, the sweeper hands the chunk to a fresh worker once the lease is over, and the chunk is
extracted once."""

from __future__ import annotations

import pytest
from django_q.models import Schedule

from memories.capture import tasks
from memories.models import Chunk, ChunkStatus, Memory
from tests.fakes.anthropic_api import delay, memories_answer
from tests.memories.canonical_support import Worker, worker_env
from tests.memories.capture.support import candidate, claude_code_chunk, ingest
from tests.served import wait_for

DECISION = candidate(
    "The shop never calls Stripe inside a request handler; webhooks go through a queue.",
    "decision",
    0.95,
    "we never call Stripe inside a request handler",
)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_extraction_loses_nothing(
    kinds_seeded, tenancy, api, fake_anthropic, settings, tmp_path
):
    lease = 3
    settings.EXTRACTION_LEASE_SECONDS = lease
    settings.ANTHROPIC_API_KEY = "test-key"
    Schedule.objects.all().delete()  # the test runs the sweeper itself, when it chooses
    env = worker_env(fake_anthropic, ZM_EXTRACTOR_TIMEOUT="30", ZM_EXTRACTION_LEASE=str(lease))
    log = tmp_path / "qcluster.log"
    fake_anthropic.script(delay(60, then=memories_answer([DECISION])))
    first = Worker(env, log)
    second = None
    try:
        response = ingest(api(tenancy.writer), claude_code_chunk())
        assert response.status_code == 202, response.json()
        chunk = Chunk.objects.get(public_id=response.json()["chunk"]["id"])
        wait_for(
            lambda: fake_anthropic.requests or first.process.poll() is not None,
            timeout=30,
            what="the worker's extraction request",
        )
        assert first.process.poll() is None, log.read_text()
        first.kill()  # kill -9 the whole cluster while the extraction call is in flight

        chunk.refresh_from_db()
        assert (chunk.status, chunk.attempts) == (ChunkStatus.PENDING, 0)
        assert chunk.content and not Memory.objects.exists()

        fake_anthropic.script(memories_answer([DECISION]))
        second = Worker(env, log)
        wait_for(tasks.sweep_chunks, timeout=lease + 10, what="the sweeper's claim")

        def extracted() -> bool:
            assert second.process.poll() is None, log.read_text()
            return Chunk.objects.filter(pk=chunk.pk, status=ChunkStatus.EXTRACTED).exists()

        wait_for(extracted, timeout=60, what="the fresh worker's extraction", interval=0.3)
    finally:
        first.stop()
        if second is not None:
            second.stop()
    chunk.refresh_from_db()
    [memory] = Memory.objects.all()
    assert chunk.memory_ids == [memory.public_id] and chunk.kept == 1
    assert len(fake_anthropic.requests) == 2
