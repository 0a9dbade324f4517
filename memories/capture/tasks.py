"""django-q2 tasks of capture. Each loads by id and calls the service."""

from __future__ import annotations

import logging

from django_q.tasks import async_task

from memories.capture import service

logger = logging.getLogger(__name__)

EXTRACT_TASK = "memories.capture.tasks.extract"


def enqueue_extraction(*, chunk_id: int, claim: str) -> None:
    """Queue the extraction of a stored chunk (called from transaction.on_commit)."""
    try:
        async_task(EXTRACT_TASK, chunk_id, claim, task_name=f"extract-{chunk_id}")
    except Exception:  # noqa: BLE001 - the chunk is stored; the sweeper queues it after the lease
        logger.exception("could not queue the extraction of chunk %s", chunk_id)


def extract(chunk_id: int, claim: str) -> str:
    return service.chunk_extract(chunk_id=chunk_id, claim=claim)


def sweep_chunks() -> int:
    """Every minute: queue the chunks that are due, including those of dead workers."""
    claimed = service.due_chunks()
    for chunk_id, claim in claimed:
        async_task(EXTRACT_TASK, chunk_id, claim, task_name=f"extract-{chunk_id}")
    return len(claimed)


def purge_chunks() -> int:
    """Daily: drop the text of chunks past the retention (their hash and results stay)."""
    return service.purge_chunk_contents()
