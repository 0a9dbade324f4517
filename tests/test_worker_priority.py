"""Background work yields to requests: the worker `make run` starts and every process of its
cluster run at ZM_WORKER_NICE with bounded thread pools, the web processes at the service's own
priority; and a worker started on its own (`manage.py qcluster` on a worker host) lowers its task
processes too. Read from the real processes, as the kernel sees them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from django.conf import settings

from tests.served import Served, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.EMBEDDED_DATABASE, reason="serve's own embedded database (no DATABASE_URL)"
    ),
]

NICE = 7  # not the default, so the setting is what is read


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One service for the module: its tests read its processes and never stop one of them."""
    served = Served(
        tmp_path_factory.mktemp("served"),
        ZM_Q_WORKERS="2",
        ZM_WORKER_NICE=str(NICE),
        ZM_WORKER_THREADS="1",
    )
    try:
        served.wait_ready()
        yield served
    finally:
        served.cleanup()


def web_processes(served: Served) -> list[psutil.Process]:
    """The web processes, not the bulk process (below them at ZM_BULK_NICE)."""
    return [p for p in served.children_matching("zeromemory.web") if "--bulk" not in p.cmdline()]


def cluster_of(worker: psutil.Process, workers: int) -> list[psutil.Process]:
    """The qcluster's sentinel and what it started, once its task processes are up."""

    def started() -> list[psutil.Process] | None:
        tree = worker.children(recursive=True)
        return tree if len(tree) >= workers + 3 else None  # sentinel, pusher, monitor, workers

    return wait_for(started, timeout=60, what="the cluster's processes")


def test_the_worker_runs_below_the_web_processes(served):
    own = os.getpriority(os.PRIO_PROCESS, 0)
    webs = web_processes(served)
    assert webs and all(web.nice() == own for web in webs)

    worker = served.child("qcluster")
    cluster = cluster_of(worker, 2)
    assert worker.nice() == max(own, NICE)
    assert {proc.nice() for proc in cluster} == {max(own, NICE)}
    for proc in [worker, *cluster]:
        environ = proc.environ()
        assert environ["OMP_NUM_THREADS"] == environ["OPENBLAS_NUM_THREADS"] == "1"
    for web in webs:
        assert "OMP_NUM_THREADS" not in web.environ() or "OMP_NUM_THREADS" in os.environ
    assert served.answers()


def autogroup_nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])


@pytest.mark.skipif(
    not Path("/proc/self/autogroup").exists()
    or Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() != "1",
    reason="a kernel without autogroup scheduling: niceness alone orders the processes",
)
def test_the_worker_s_session_runs_below_the_web_processes_sessions(served):
    """With autogroup scheduling the kernel shares the CPU between sessions before niceness
    counts, and `serve` starts each child in a session of its own: the worker's session is
    lowered to its niceness, so its task processes yield to web processes of other sessions."""
    webs = web_processes(served)
    worker = served.child("qcluster")
    cluster = cluster_of(worker, 2)
    assert {autogroup_nice(proc.pid) for proc in [worker, *cluster]} == {NICE}
    assert {autogroup_nice(web.pid) for web in webs} == {0}  # a new session's group


def test_a_worker_started_on_its_own_lowers_its_task_processes(served):
    own = os.getpriority(os.PRIO_PROCESS, 0)
    if own >= NICE:
        pytest.skip("this test already runs at the worker's niceness")
    alone = subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"],
        cwd=settings.BASE_DIR,
        env=served.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        worker = psutil.Process(alone.pid)

        def lowered() -> list[psutil.Process] | None:
            tree = worker.children(recursive=True)
            niced = [proc for proc in tree if proc.nice() == NICE]
            return niced if len(niced) >= 2 else None

        niced = wait_for(lowered, timeout=90, what="two task processes at the worker's niceness")
        assert len(niced) == 2  # the task processes, not the sentinel, pusher or monitor
        assert worker.nice() == own  # nobody lowered the command itself
        if Path("/proc/self/autogroup").exists():  # it leads its session: its group goes down
            assert autogroup_nice(worker.pid) == NICE
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(alone.pid, 9)
        alone.wait(timeout=30)


def test_the_database_sessions_of_task_processes_keep_the_database_s_priority(served):
    """With the embedded database, the PostgreSQL process serving a task process's connection
    is named for it and runs at the database's own niceness, as the one serving the check does:
    lowered, it would hold the index pages and WAL it locks through the slices others get, and
    requests' statements would wait for background work."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    query = (
        "import os\n"
        "from django.db import connection\n"
        "cursor = connection.cursor()\n"
        "cursor.execute(\"SELECT pg_backend_pid(), coalesce(array_agg(pid), '{}') FROM "
        "pg_stat_activity WHERE application_name = 'zero-memory worker'\")\n"
        "mine, workers = cursor.fetchone()\n"
        "print(*(os.getpriority(os.PRIO_PROCESS, pid) for pid in [mine, *workers]))"
    )

    def sessions() -> list[int] | None:
        niceness = [int(value) for value in served.django(query).split()]
        return niceness if len(niceness) > 1 else None  # task processes write heartbeats

    mine, *workers = wait_for(sessions, timeout=90, what="a task process's database session")
    assert mine == own
    assert set(workers) == {own}
