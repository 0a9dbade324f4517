"""How `manage.py serve` runs: its web processes and their threads, the django-q2 worker, and the
streaming replicas its read requests may read from.

Star-imported by settings.py; every knob is an environment variable listed in `.env.example`.
"""

from __future__ import annotations

import os

from zeromemory.core.env import env_bool, env_int, env_list, env_str

# Web server: ZM_WEB_PROCESSES processes (one per core by default) share one listening socket;
# each runs Django's request handling in ZM_WEB_THREADS threads (each holding one database
# connection) and answers MCP on its event loop.
SERVE_HOST = env_str("ZM_HOST", "127.0.0.1")
SERVE_PORT = env_int("ZM_PORT", 8000, minimum=1)
WEB_PROCESSES = env_int("ZM_WEB_PROCESSES", os.cpu_count() or 1, minimum=1)
WEB_THREADS = env_int("ZM_WEB_THREADS", 8, minimum=1)
# Bulk requests (a batch of memories, an archive import) are served by ZM_BULK_PROCESSES
# processes of their own at ZM_BULK_NICE (zeromemory.core.bulk), which the web processes hand
# them to on ZM_BULK_PORT of 127.0.0.1 (`serve` sets it); 0 processes: the web processes serve
# them too. The web processes go first, the bulk processes next, the worker last: at niceness 0
# the bulk process's session took as large a share of the cores as a web process's, and a single
# remember beside a writer of batches waited for it (docs/benchmarks.md).
BULK_PROCESSES = env_int("ZM_BULK_PROCESSES", 1, minimum=0)
BULK_NICE = env_int("ZM_BULK_NICE", 5, minimum=0)
BULK_PORT = env_int("ZM_BULK_PORT", 0, minimum=0)
# Set by `python -m zeromemory.web --bulk`: this process is a bulk process.
SERVES_BULK = env_bool("ZM_SERVES_BULK", False)

# Background work: django-q2 with the database as broker (Redis when one is configured).
Q_WORKERS = env_int("ZM_Q_WORKERS", 2, minimum=1)
Q_TIMEOUT = env_int("ZM_Q_TIMEOUT", 120, minimum=5)
# Background work yields to requests: the worker and its task processes run at this niceness
# (the web processes at the one they were started with), each task process with this many
# torch (and BLAS) threads.
WORKER_NICE = env_int("ZM_WORKER_NICE", 15, minimum=0)
WORKER_THREADS = env_int("ZM_WORKER_THREADS", 1, minimum=1)
# Bulk work (a batch's passes of the model, an import's, the worker's tasks and slices) waits
# while a request someone waits on (recall, a single remember, a page) is in flight on this
# host, at most this long per pass or step, so that it always goes on; 0: never waits.
FOREGROUND_WAIT_MS = env_int("ZM_FOREGROUND_WAIT_MS", 200, minimum=0)
# And `serve` stops its bulk processes and its worker (SIGSTOP) while such a request is in flight
# in one of its web processes (zeromemory.conductor): for ZM_FOREGROUND_STOP_MS at most at a
# time, and while requests keep coming they still run ZM_BACKGROUND_SHARE percent of the time.
# 0 ms (or a share of 100): never stopped.
FOREGROUND_STOP_MS = env_int("ZM_FOREGROUND_STOP_MS", 100, minimum=0)
BACKGROUND_SHARE = env_int("ZM_BACKGROUND_SHARE", 25, minimum=1)
if BACKGROUND_SHARE > 100:
    raise ValueError(f"ZM_BACKGROUND_SHARE is a percentage, not {BACKGROUND_SHARE}")
# Set by `serve` in its web processes: the descriptor they tell their requests in flight on.
CONDUCTOR_FD = env_int("ZM_CONDUCTOR_FD", 0, minimum=0)
# A hygiene scan run stops after this many seconds (at the end of a slice) and the next run goes
# on: kept well inside the task timeout.
HYGIENE_SCAN_SECONDS = env_int("ZM_HYGIENE_SCAN_SECONDS", max(1, Q_TIMEOUT // 2), minimum=1)
# Subjects one request's scan of a scope compares (POST /api/v1/scopes/{id}/hygiene-scan, the
# scan_hygiene tool): it runs inside the request, so its share is far smaller than a scheduled
# slice; the answer's next_cursor goes on from there.
HYGIENE_SCOPE_SCAN_SUBJECTS = env_int("ZM_HYGIENE_SCOPE_SCAN_SUBJECTS", 500, minimum=1)
Q_CLUSTER: dict[str, object] = {
    "name": "zeromemory",
    "workers": Q_WORKERS,
    "timeout": Q_TIMEOUT,
    "retry": Q_TIMEOUT + 60,
    "orm": "default",
    "poll": 0.5,
    "catch_up": False,
    "save_limit": 500,
    "ack_failures": True,
    "max_attempts": 1,
    "sync": False,
}
REDIS_URL = env_str("ZM_REDIS_URL")
if REDIS_URL:
    Q_CLUSTER.pop("orm")
    Q_CLUSTER["redis"] = REDIS_URL

# Streaming replicas (zeromemory.core.routing): a replica further behind than the max lag is
# skipped; a user's reads go to the primary this long after their write (keep it above the lag).
REPLICA_URLS = env_list("ZM_DATABASE_REPLICA_URLS", "")
REPLICA_MAX_LAG_SECONDS = env_int("ZM_REPLICA_MAX_LAG_SECONDS", 5, minimum=1)
READ_YOUR_WRITES_SECONDS = env_int(
    "ZM_READ_YOUR_WRITES_SECONDS", REPLICA_MAX_LAG_SECONDS + 2, minimum=1
)


def replica_databases(default: dict[str, object]) -> dict[str, dict[str, object]]:
    """DATABASES entries replica1, replica2, ... (the same database as default in tests)."""
    import dj_database_url

    return {
        f"replica{n}": {
            **dj_database_url.parse(url),
            "ENGINE": default["ENGINE"],
            "CONN_MAX_AGE": default["CONN_MAX_AGE"],
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": {"connect_timeout": 2},
            "TEST": {"MIRROR": "default"},
        }
        for n, url in enumerate(REPLICA_URLS, start=1)
    }
