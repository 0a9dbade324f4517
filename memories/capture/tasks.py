"""django-q2 tasks of capture. Each loads by id and calls the service."""

from __future__ import annotations

from memories.capture import service

EXTRACT_TASK = service.EXTRACTION.task


def enqueue_extraction(*, chunk_id: int, claim: str) -> None:
    """Queue the extraction of a stored chunk (called from transaction.on_commit)."""
    service.EXTRACTION.enqueue(row_id=chunk_id, claim=claim)


def extract(chunk_id: int, claim: str) -> str:
    return service.chunk_extract(chunk_id=chunk_id, claim=claim)


def sweep_chunks() -> int:
    """Queue the chunks that are due, including those of dead workers (the schedule sweeps every
    job at once: `memories.jobs.jobs_sweep`)."""
    return service.EXTRACTION.sweep()


def purge_chunks() -> int:
    """Daily: drop the text of chunks past the retention (their hash and results stay)."""
    return service.purge_chunk_contents()
