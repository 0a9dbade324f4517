"""django-q2 tasks of portability, at the paths the queue and the schedule name."""

from __future__ import annotations

from memories.portability import prepared


def export_prepare(job_id: int) -> str:
    """Queued when a person starts an export on the dashboard: write its file."""
    return prepared.export_job_run(job_id=job_id)


def export_files_sweep() -> int:
    """Every minute (a django-q2 schedule): remove export files and jobs past their time."""
    return prepared.export_files_sweep()
