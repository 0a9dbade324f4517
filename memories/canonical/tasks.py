"""django-q2 tasks of canonicalization. Each loads by id and calls the service."""

from __future__ import annotations

import logging

from django.conf import settings
from django_q.tasks import async_task

from memories.canonical import service

logger = logging.getLogger(__name__)

CANONICALIZE_TASK = "memories.canonical.tasks.canonicalize"


def enqueue_canonicalization(*, memory_id: int, claim: str) -> None:
    """Queue the translation of a pending memory (called from transaction.on_commit)."""
    if not settings.ANTHROPIC_API_KEY:
        # It waits, pending, with its claim released so that the first sweep after a key is
        # configured queues it (rather than a sweep one lease later).
        service.wait_for_key(memory_id=memory_id, claim=claim)
        return
    try:
        async_task(CANONICALIZE_TASK, memory_id, claim, task_name=f"canonicalize-{memory_id}")
    except Exception:  # noqa: BLE001 - the write stands; the sweeper queues it after the lease
        logger.exception("could not queue the translation of memory %s", memory_id)


def canonicalize(memory_id: int, claim: str) -> str:
    return service.canonicalize_memory(memory_id=memory_id, claim=claim)


def sweep_translations() -> int:
    """Periodic: queue every pending memory that is due, including those of dead workers."""
    if not settings.ANTHROPIC_API_KEY:
        return 0
    claimed = service.due_for_translation()
    for memory_id, claim in claimed:
        async_task(CANONICALIZE_TASK, memory_id, claim, task_name=f"canonicalize-{memory_id}")
    return len(claimed)
