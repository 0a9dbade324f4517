"""The reduced cluster drill in `make test`: two web hosts behind HAProxy, Redis as the broker,
one worker host, the primary; one web host is killed (kill -9 of every process in its namespace)
under a short load. Clients see at most the requests in flight on it fail, the other host serves
the rest, every acknowledged write reads back, and `down` leaves nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

from scripts.zmcluster import services

CLIENTS = 10
MISSING = services.missing_packages("redis-server", "haproxy", "pgbouncer")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the cluster's namespaces need root"),
    pytest.mark.skipif(bool(MISSING), reason=f"missing {MISSING}: sh scripts/cluster-deps.sh"),
]


def test_killing_a_web_host_under_load_loses_nothing():
    command = [sys.executable, "-m", "scripts.zmcluster", "drill", "--reduced"]
    command += ["--clients", str(CLIENTS), "--seconds", "15"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO", "ZM_"))}
    done = subprocess.run(
        command, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["left_behind"] == []
    drill = result["drills"]["web_kill"]
    assert drill["acked"] > 0 and drill["acked_lost"] == 0, drill
    # Only the requests in flight on the killed host fail (at most one per client), as 502/503
    # from HAProxy or a cut connection; two seconds after the kill nothing fails.
    assert set(drill["errors"]) <= {"0", "502", "503"}, drill
    assert sum(drill["errors"].values()) <= CLIENTS, drill
    assert drill["errors_2s_after_kill"] == 0, drill
    assert drill["requests"] > 10 * CLIENTS, drill
