"""Dashboard exports: the zip of one scope prepared by the worker in a file, with its progress.

A person starts one (`export_job_start`); on commit the task `export_prepare` writes the
archive (the same bytes as GET /api/v1/scopes/{id}/export) to ZM_DATA_DIR/exports, counting the
memories written; the page polls the count and, once the file is ready, downloads it once
(`export_job_take`). The caller obtains the scope through the access module each time, so a
member removed from the scope (or who lost the admin role) meanwhile gets nothing. A download
removes the file; the sweeper removes every file and row past its time (a ready file nobody
fetched, a job whose worker died) and any file left without a row. In a deployment of several
hosts the web and worker hosts must share that directory.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django_q.tasks import async_task

from memories.models import ExportJob, ExportJobStatus
from memories.portability.export import export_archive, export_size_hint
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound

logger = logging.getLogger(__name__)

TASK = "memories.portability.tasks.export_prepare"
# The progress row is written at most this often (seconds), and after the last memory.
PROGRESS_SECONDS = 0.5


def export_directory() -> Path:
    return Path(settings.DATA_DIR) / "exports"


def export_path(job: ExportJob) -> Path:
    return export_directory() / f"{job.public_id}.zip"


def export_job_start(*, actor: Actor, scope: Scope) -> ExportJob:
    """A job exporting this scope (which the caller may administer), queued on commit. Until it
    is ready it may take as long as a task may run."""
    job = ExportJob.objects.create(
        user=actor.user,
        scope=scope,
        total=export_size_hint(scopes=[scope]),
        expires_at=timezone.now()
        + timedelta(seconds=settings.Q_TIMEOUT + settings.EXPORT_URL_SECONDS),
    )
    transaction.on_commit(lambda: async_task(TASK, job.pk, task_name=f"export-{job.pk}"))
    return job


def export_job_run(*, job_id: int) -> str:
    """Write the job's archive to its file, counting; returns what happened (for logs)."""
    jobs = ExportJob.objects.select_related("scope")
    job = jobs.filter(pk=job_id, status=ExportJobStatus.RUNNING).first()
    if job is None:
        return "gone"
    path = export_path(job)
    partial = path.with_suffix(".part")
    written = 0
    reported = time.monotonic()

    def progress(count: int) -> None:
        nonlocal written, reported
        written = count
        if time.monotonic() - reported >= PROGRESS_SECONDS:
            ExportJob.objects.filter(pk=job.pk).update(done=count)
            reported = time.monotonic()

    try:
        # Only the server's own user reads an archive of somebody's memories.
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            for part in export_archive(scopes=[job.scope], progress=progress):
                out.write(part)
        partial.replace(path)
    except Exception:
        logger.exception("the export %s failed", job.public_id)
        partial.unlink(missing_ok=True)
        ExportJob.objects.filter(pk=job.pk).update(status=ExportJobStatus.FAILED)
        return "failed"
    ready = ExportJob.objects.filter(pk=job.pk, status=ExportJobStatus.RUNNING).update(
        status=ExportJobStatus.READY,
        done=written,
        total=written,
        expires_at=timezone.now() + timedelta(seconds=settings.EXPORT_URL_SECONDS),
    )
    if not ready:  # the scope or the account was erased meanwhile
        path.unlink(missing_ok=True)
        return "gone"
    return "ready"


def export_job_of(*, actor: Actor, scope: Scope, public_id: str) -> ExportJob:
    """The actor's own export job of this scope (obtained through the access module)."""
    job = ExportJob.objects.filter(public_id=public_id, scope=scope, user=actor.user).first()
    if job is None:
        raise NotFound(_("No export with id %(id)s.") % {"id": public_id})
    return job


def export_job_stalled(job: ExportJob) -> bool:
    """Whether a job still marked running is past its time (its worker died or timed out)."""
    return job.status == ExportJobStatus.RUNNING and job.expires_at <= timezone.now()


def export_job_take(*, job: ExportJob) -> IO[bytes]:
    """The ready file, once: the job is marked downloaded and the file unlinked (the open
    handle still reads it)."""
    gone = NotFound(_("This export was downloaded already or has expired."))
    taken = ExportJob.objects.filter(
        pk=job.pk, status=ExportJobStatus.READY, expires_at__gt=timezone.now()
    ).update(status=ExportJobStatus.DOWNLOADED)
    if not taken:
        raise gone
    path = export_path(job)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise gone from None
    path.unlink(missing_ok=True)
    return handle


def export_files_forget(jobs: QuerySet[ExportJob]) -> None:
    """Delete these jobs and their files (an erasure, the sweeper)."""
    for job in list(jobs):
        export_path(job).unlink(missing_ok=True)
        export_path(job).with_suffix(".part").unlink(missing_ok=True)
    jobs.delete()


def export_files_sweep() -> int:
    """The jobs and files past their time, and files without a job; how many files went."""
    expired = ExportJob.objects.filter(expires_at__lte=timezone.now())
    count = expired.count()
    export_files_forget(expired)
    directory = export_directory()
    if directory.is_dir():
        # The files first: a job started after the listing has its row in `live` below.
        paths = list(directory.iterdir())
        live = set(ExportJob.objects.values_list("public_id", flat=True))
        for path in paths:
            if path.stem not in live:
                path.unlink(missing_ok=True)
                count += 1
    return count
