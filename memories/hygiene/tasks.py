"""django-q2 tasks of hygiene. Each loads by id (or scans) and calls the service."""

from __future__ import annotations

import logging

from memories.hygiene import scan as scanning
from memories.hygiene import service

logger = logging.getLogger(__name__)

JUDGE_TASK = service.JUDGING.task


def judge(conflict_id: int, claim: str) -> str:
    return service.conflict_judge(conflict_id=conflict_id, claim=claim)


def judge_many(claims: list[tuple[int, str]]) -> list[str]:
    """Several claimed pairs of one scope, judged in one call; then the next call's worth, if
    the queue has room."""
    outcomes = service.conflicts_judge(
        claims=[(int(row_id), str(claim)) for row_id, claim in claims]
    )
    service.JUDGING.queue_next()
    return outcomes


def sweep_conflicts() -> int:
    """Queue the pairs that are due, including those of dead workers (the schedule sweeps every
    job at once: `memories.jobs.jobs_sweep`)."""
    return service.sweep_conflicts()


def scan() -> int:
    """On demand (and from the schedule): scan, then queue what is due for the judge."""
    record = scanning.hygiene_scan()
    logger.info(
        "hygiene scan: %d subjects, %d pairs found, %d new",
        record.subjects,
        record.pairs_found,
        record.pairs_new,
    )
    sweep_conflicts()
    return record.pairs_new


def scan_if_due() -> int:
    """Every minute: scan when ZM_HYGIENE_INTERVAL_MINUTES have passed since the last scan."""
    return scan() if scanning.scan_due() else 0
