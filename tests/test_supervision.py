"""`make run` heals itself: a web, worker or task-worker process killed with SIGKILL is restarted
while the rest keeps serving, and no process of the service outlives it."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

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


@pytest.fixture
def served(tmp_path):
    served = Served(tmp_path, ZM_Q_WORKERS="2", ZM_WEB_PROCESSES="2")
    try:
        served.wait_ready()
        yield served
    finally:
        served.cleanup()


def gone(processes: list[psutil.Process]) -> bool:
    for proc in processes:
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            continue
    return True


def test_killed_children_are_restarted_and_nothing_outlives_the_service(served):
    webs, worker = served.children_matching("zeromemory.web"), served.child("qcluster")
    assert len(webs) == 2

    # A web process: the others keep serving while it is restarted; the worker is untouched.
    web = webs[0]
    web.kill()
    if len(webs) > 1:
        assert all(served.answers() for _ in range(10))
    wait_for(
        lambda: served.restarted("zeromemory.web", webs) and served.answers(),
        timeout=90,
        what="a new web process to answer",
    )
    assert served.child("qcluster").pid == worker.pid
    assert f"(pid {web.pid}) exited with SIGKILL" in served.log()

    # A task worker of the cluster (a grandchild of the qcluster child): django-q2 replaces it.
    # The cluster runs at niceness 15 (ZM_WORKER_NICE): beside the suite's other processes on a
    # busy machine it gets a small share of the cores, and may take long to start.
    sentinel = wait_for(lambda: worker.children(), timeout=120, what="the sentinel")[0]
    pool = wait_for(
        lambda: len(sentinel.children()) >= 4 and sentinel.children(),
        timeout=120,
        what="the cluster's pusher, monitor and workers",
    )
    victim = pool[-1]
    victim.kill()
    wait_for(
        lambda: (
            victim.pid not in {p.pid for p in sentinel.children()}
            and len(sentinel.children()) == len(pool)
        ),
        timeout=120,
        what="the sentinel to replace the killed worker",
    )
    assert served.child("qcluster").pid == worker.pid
    wait_for(served.answers, timeout=30, what="the service to answer")

    # The whole cluster's parent: its sentinel and workers must not live on as orphans.
    cluster = worker.children(recursive=True)
    assert cluster
    worker.kill()
    wait_for(lambda: gone(cluster), timeout=30, what="the dead cluster's processes to go")
    new_worker = wait_for(
        lambda: served.restarted("qcluster", [worker]),
        timeout=120,
        what="a new qcluster",
    )
    wait_for(lambda: new_worker.children(recursive=True), timeout=120, what="the new cluster")
    wait_for(served.answers, timeout=30, what="the service to answer")
    assert served.orphans() == []
    assert f"worker (pid {worker.pid}) exited with SIGKILL" in served.log()

    # Stopping the service stops everything it ever started, and its database.
    tree = psutil.Process(served.process.pid).children(recursive=True)
    assert served.stop(signal.SIGTERM) == 0, served.log()
    assert gone(tree)
    assert served.processes() == []
    assert not (served.data_dir / "pgdata" / "postmaster.pid").exists()
    assert "Stopped the embedded database." in served.log()


def test_ctrl_c_while_a_child_is_down_stops_everything(served):
    web = served.child("zeromemory.web")
    tree = psutil.Process(served.process.pid).children(recursive=True)
    web.kill()
    assert served.stop(signal.SIGINT) == 0, served.log()
    assert gone(tree)
    assert served.processes() == []
    assert not (served.data_dir / "pgdata" / "postmaster.pid").exists()


def test_requests_in_flight_stop_the_background_and_ctrl_c_meanwhile_stops_everything(tmp_path):
    """zeromemory.conductor under `serve`: while clients keep requests in flight in the web
    processes, the worker's and the bulk process's groups are stopped (for their bounds), never
    a web process; with none in flight they run; Ctrl-C while they are stopped ends them all."""
    served = Served(tmp_path, ZM_WEB_PROCESSES="2", ZM_BULK_PROCESSES="1")
    try:
        served.wait_ready()
        # Every uvicorn process started, the bulk one too (a process still loading its model
        # takes its SIGTERM only once started, and stopped for requests it starts slower).
        wait_for(
            lambda: served.log().count("Application startup complete.") >= 3,
            timeout=120,
            what="the web and bulk processes started",
        )
        webs = served.children_matching("--fd")
        bulk = [proc for proc in webs if "--bulk" in proc.cmdline()]
        webs = [proc for proc in webs if proc not in bulk]
        worker = served.child("qcluster")
        assert len(webs) == 2 and len(bulk) == 1
        background = [worker, *bulk]

        def status_of(procs: list[psutil.Process]) -> list[bool]:
            return [proc.status() == psutil.STATUS_STOPPED for proc in procs]

        going = threading.Event()

        def client() -> None:
            while not going.is_set():
                served.answers()

        seen_stopped = {proc.pid: False for proc in background}
        with ThreadPoolExecutor(2) as pool:
            clients = [pool.submit(client) for _ in range(2)]
            until = time.monotonic() + 30
            while not all(seen_stopped.values()) and time.monotonic() < until:
                for proc, was in zip(background, status_of(background), strict=True):
                    seen_stopped[proc.pid] |= was
                assert not any(status_of(webs))
                time.sleep(0.001)
            going.set()
            for running in clients:
                running.result()
        assert all(seen_stopped.values()), seen_stopped
        wait_for(
            lambda: not any(status_of(background)), timeout=10, what="the background continued"
        )

        # Requests in flight again, and Ctrl-C meanwhile.
        going.clear()
        tree = psutil.Process(served.process.pid).children(recursive=True)
        with ThreadPoolExecutor(2) as pool:
            clients = [pool.submit(client) for _ in range(2)]
            wait_for(lambda: any(status_of(background)), timeout=30, what="a stop")
            assert served.stop(signal.SIGINT) == 0, served.log()
            going.set()
            for running in clients:
                running.result()
        assert gone(tree)
        assert served.processes() == []
        # Each child ended on its SIGTERM: none was stopped again while the web processes
        # still answered, and none was left to be killed.
        assert "killed what was left" not in served.log(), served.log()
    finally:
        served.cleanup()
