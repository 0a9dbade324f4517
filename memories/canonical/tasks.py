"""django-q2 tasks of canonicalization. Each loads by id and calls the service."""

from __future__ import annotations

from memories.canonical import service

CANONICALIZE_TASK = service.TRANSLATION.task


def enqueue_canonicalization(*, memory_id: int, claim: str) -> None:
    """Queue the translation of a pending memory (called from transaction.on_commit); without a
    key it waits, pending, its claim released so that the first sweep after a key is set takes
    it (rather than a sweep one lease later)."""
    service.TRANSLATION.enqueue(row_id=memory_id, claim=claim)


def canonicalize(memory_id: int, claim: str) -> str:
    return service.canonicalize_memory(memory_id=memory_id, claim=claim)


def sweep_translations() -> int:
    """Queue every pending memory that is due, including those of dead workers (the schedule
    sweeps every job at once: `memories.jobs.jobs_sweep`)."""
    return service.TRANSLATION.sweep()
