"""Background work yields to requests.

Every write starts work in the worker (canonicalization, extraction, the hygiene scan, judging),
and a team writes all day, so that work must never take the cores from the requests:

- priority: `manage.py serve` starts the worker at niceness ZM_WORKER_NICE, and every django-q2
  task process lowers itself to it as it starts (`task_process_started`, on django-q2's
  `post_spawn`), so a worker started on its own (`manage.py qcluster` on a worker host) yields
  too. When a web process and a task both want a core, the kernel gives it to the web process;
- threads: a task process runs torch and BLAS on ZM_WORKER_THREADS threads, so the task
  processes together never hold more cores than there are of them;
- slices: a long pass (the exact hygiene scan, re-embedding, an import) works in slices and
  calls `breathe()` between them, which ends the slice's hold on the CPU.
"""

from __future__ import annotations

import os
import time
from typing import Any

from django.conf import settings
from threadpoolctl import threadpool_limits

from memories import embeddings
from zeromemory.supervisor import lower_priority

# The libraries' thread pools read these when they load: a task process sets them before.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# Between two slices: long enough for the scheduler to run whatever waited, short enough that an
# idle server loses nothing it would notice.
PAUSE_SECONDS = 0.002


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
    os.environ.update(worker_environment())  # for pools not loaded yet
    threadpool_limits(settings.WORKER_THREADS)  # BLAS pools already loaded (numpy's)
    embeddings.limit_threads(settings.WORKER_THREADS)


def breathe() -> None:
    """Between two slices of a long pass: give the CPU back to whatever waits for it."""
    time.sleep(PAUSE_SECONDS)
