"""Worker heartbeats: each django-q2 worker process says every few seconds that it is alive.

django-q2 sends `post_spawn` in every task worker it starts (again after one dies or times out);
the receiver starts a daemon thread there that upserts the worker's row. /readyz asks whether any
worker was seen in the last minute. Rows of workers gone for an hour are deleted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from datetime import datetime, timedelta

from django.db import connection
from django.utils import timezone

logger = logging.getLogger(__name__)

INTERVAL_SECONDS = 15
FRESH = timedelta(minutes=1)
FORGET_AFTER = timedelta(hours=1)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def beat(*, worker: str) -> None:
    from zeromemory.models import WorkerHeartbeat

    now = timezone.now()
    WorkerHeartbeat.objects.update_or_create(worker=worker, defaults={"seen_at": now})
    WorkerHeartbeat.objects.filter(seen_at__lt=now - FORGET_AFTER).delete()


def last_seen() -> datetime | None:
    from zeromemory.models import WorkerHeartbeat

    latest = WorkerHeartbeat.objects.order_by("-seen_at").first()
    return latest.seen_at if latest is not None else None


def worker_alive(*, now: datetime | None = None) -> bool:
    seen = last_seen()
    return seen is not None and seen >= (now or timezone.now()) - FRESH


def _beat_forever() -> None:
    worker = worker_name()
    while True:
        try:
            beat(worker=worker)
        except Exception:  # noqa: BLE001 - an outage; the next beat tries again
            logger.debug("heartbeat not written", exc_info=True)
        with contextlib.suppress(Exception):  # the thread must outlive any failure
            connection.close()
        time.sleep(INTERVAL_SECONDS)


_beating_in: int | None = None  # the pid whose heartbeat thread runs


def start_beating(sender: object, proc_name: str = "", **kwargs: object) -> None:
    """post_spawn receiver: one heartbeat thread per worker process."""
    global _beating_in
    from django_q.conf import Conf

    # In sync mode (tests) django-q2 runs a task through worker() in the caller's own process.
    if Conf.SYNC or _beating_in == os.getpid():
        return
    _beating_in = os.getpid()
    threading.Thread(target=_beat_forever, name="zm-heartbeat", daemon=True).start()
