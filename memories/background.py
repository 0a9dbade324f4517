"""Background work yields to requests.

Every write starts work in the worker (canonicalization, extraction, the hygiene scan, judging),
and a team writes all day, so that work must never take the cores from the requests:

- priority: `manage.py serve` starts the worker at niceness ZM_WORKER_NICE, and every django-q2
  task process lowers itself to it as it starts (`task_process_started`, on django-q2's
  `post_spawn`), so a worker started on its own (`manage.py qcluster` on a worker host) yields
  too. When a web process and a task both want a core, the kernel gives it to the web process.
  Under autogroup scheduling the kernel shares the CPU between sessions first, so the worker,
  which `serve` starts in a session of its own, lowers its session's group as well
  (`lower_priority`), and so does a task process of a qcluster that leads its own session;
- threads: a task process runs torch and BLAS on ZM_WORKER_THREADS threads, so the task
  processes together never hold more cores than there are of them;
- the database: the PostgreSQL process that serves a task process's connection keeps the
  database's own priority. Lowered, it would hold the locks it takes on shared pages (an index
  page while it inserts, the WAL while it commits) through every slice the kernel gave to
  others, and a request's statement needing that page would wait for background work: with
  them lowered, recall's busy tail was longer (docs/benchmarks.md, issue 41). With the
  embedded database a task process's sessions are named (`pg_stat_activity`);
- slices: a long pass (the exact hygiene scan, re-embedding, an import) works in slices and
  calls `breathe()` between them, which ends the slice's hold on the CPU;
- requests first: between slices, before each job and before each pass of the model, the
  worker waits while a request someone waits on is in flight on this host, in any web process
  (zeromemory.core.foreground), at most ZM_FOREGROUND_WAIT_MS each time.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.backends.signals import connection_created
from threadpoolctl import threadpool_limits

from memories import embeddings
from zeromemory.core import foreground
from zeromemory.supervisor import lower_autogroup, lower_priority

# The libraries' thread pools read these when they load: a task process sets them before.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# Between two slices: long enough for the scheduler to run whatever waited, short enough that an
# idle server loses nothing it would notice.
PAUSE_SECONDS = 0.002
# What pg_stat_activity shows for a task process's connection.
WORKER_APPLICATION = "zero-memory worker"


def worker_environment() -> dict[str, str]:
    """The environment variables of a worker process (torch and BLAS thread pools)."""
    return dict.fromkeys(THREAD_VARIABLES, str(settings.WORKER_THREADS))


def task_process_started(**kwargs: Any) -> None:
    """django-q2's `post_spawn` receiver, run in each new task process: lower its priority and
    bound its threads before it takes a task. A worker loop run in the calling process itself
    (django-q2's sync mode, the test suite's inline worker) leaves that process as it is: it is
    the web process or the caller, not a task process."""
    if kwargs.get("proc_name") == "MainProcess":
        return
    lower_priority(settings.WORKER_NICE)
    if _in_the_worker_s_own_session():
        lower_autogroup(settings.WORKER_NICE)
    os.environ.update(worker_environment())  # for pools not loaded yet
    threadpool_limits(settings.WORKER_THREADS)  # BLAS pools already loaded (numpy's)
    embeddings.limit_threads(settings.WORKER_THREADS)
    sessions_named(application=WORKER_APPLICATION)


def _in_the_worker_s_own_session() -> bool:
    """Whether this process's session is led by a qcluster (`setsid manage.py qcluster`, or
    the worker `serve` starts): then its autogroup is the worker's alone, and lowering it lowers
    nothing else. A qcluster started from a shell shares the shell's, which is left as it is."""
    try:
        leader = Path(f"/proc/{os.getsid(0)}/cmdline").read_bytes()
    except OSError:
        return False
    return b"qcluster" in leader


def sessions_named(*, application: str) -> None:
    """With the embedded database, each new connection of this process is named `application`
    in `pg_stat_activity` (a task process's, a bulk process's). Only there: behind a pooler
    the same server session would serve a request next, under that name."""
    if settings.EMBEDDED_DATABASE:
        connection_created.connect(
            partial(_session_named, application=application),
            weak=False,  # the partial is held by the signal alone
            dispatch_uid=f"zm-session-{application}",
        )


def _session_named(sender: Any, connection: Any, *, application: str, **kwargs: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET application_name = %s", [application])


def breathe() -> None:
    """Between two slices of a long pass: give the CPU back to whatever waits for it, and to
    the host's requests in flight (within ZM_FOREGROUND_WAIT_MS)."""
    time.sleep(PAUSE_SECONDS)
    foreground.give_way()
