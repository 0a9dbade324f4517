"""Operations surfaces: /readyz, /metrics, and the production settings read from the environment."""

from __future__ import annotations

import io
import json
import re
import signal
import subprocess
import sys
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from tests.helpers import child_env
from tests.served import BASE_DIR, Served, request, wait_for
from zeromemory import heartbeat
from zeromemory.models import WorkerHeartbeat

# The production variables docs/operations.md documents (with a generated key and real host names).
PRODUCTION = {
    "ZM_SECRET_KEY": "k" * 10 + "Q7x!vR2#pL9@wE4$tY6%uI8^oP0&aS3*dF5(gH1)jK",
    "ZM_ALLOWED_HOSTS": "memory.example.com",
    "ZM_CSRF_TRUSTED_ORIGINS": "https://memory.example.com",
    "ZM_PUBLIC_URL": "https://memory.example.com",
    "ZM_SECURE": "true",
    "ZM_PROXY_SSL_HEADER": "true",
    "ZM_METRICS": "true",
    "ZM_METRICS_TOKEN": "metrics-token-for-the-scraper",
}


def test_readyz_wants_the_database_migrations_and_a_live_worker(client, db):
    WorkerHeartbeat.objects.all().delete()
    response = client.get("/readyz")
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    assert response.json() == {
        "status": "error",
        "database": "ok",
        "migrations": "ok",
        "worker": "no worker heartbeat in the last minute",
    }
    heartbeat.beat(worker="host:1")
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "migrations": "ok", "worker": "ok"}

    WorkerHeartbeat.objects.update(seen_at=timezone.now() - timedelta(seconds=61))
    assert client.get("/readyz").status_code == 503
    assert client.get("/healthz").status_code == 200  # alive, only not ready


def test_metrics_are_off_unless_turned_on(client, db):
    assert not settings.METRICS
    response = client.get("/metrics")
    assert response.status_code == 404


def run_with(env: dict[str, str], code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _deploy_check(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_check_is_clean_with_the_documented_production_variables(tmp_path):
    env = {**PRODUCTION, "ZM_DATA_DIR": str(tmp_path)}
    done = _deploy_check(env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout

    # Without ZM_SECURE the checklist names what is missing.
    env.pop("ZM_SECURE")
    env.pop("ZM_METRICS_TOKEN")
    done = _deploy_check(env)
    assert done.returncode != 0
    for warning in ("W004", "W008", "W012", "W016"):
        assert warning in done.stderr


SECURE_PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
c = Client(HTTP_HOST="memory.example.com")
plain = c.get("/login/")
proxied = c.get("/login/", HTTP_X_FORWARDED_PROTO="https")
probe = c.get("/healthz")
print(json.dumps({
    "hosts": settings.ALLOWED_HOSTS,
    "plain": [plain.status_code, plain.get("Location")],
    "proxied": [proxied.status_code, proxied.get("Strict-Transport-Security"),
                proxied.cookies["csrftoken"]["secure"] is True],
    "probe": probe.status_code,
}))
"""


def test_secure_redirects_to_https_trusts_the_proxy_and_sets_secure_cookies(tmp_path, db):
    done = run_with({**PRODUCTION, "ZM_DATA_DIR": str(tmp_path), "ZM_TESTING": ""}, SECURE_PROBE)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["hosts"] == ["memory.example.com"]  # no `testserver` outside the test settings
    assert seen["plain"] == [301, "https://memory.example.com/login/"]
    status, hsts, secure_cookie = seen["proxied"]
    assert status == 200 and "max-age=31536000" in hsts and "includeSubDomains" in hsts
    assert secure_cookie
    assert seen["probe"] == 200  # health probes over plain HTTP are not redirected


def test_metrics_with_secure_need_a_token(tmp_path):
    env = {**PRODUCTION, "ZM_DATA_DIR": str(tmp_path), "ZM_METRICS_TOKEN": ""}
    done = run_with(env, "import django; django.setup()")
    assert done.returncode != 0 and "ZM_METRICS_TOKEN" in done.stderr


def metric(text: str, name: str, **labels: str) -> float | None:
    """The value of one sample of a Prometheus text exposition."""
    for line in text.splitlines():
        match = re.fullmatch(r"([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)", line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(match.group(3))
    return None


@pytest.mark.slow
@pytest.mark.skipif(not settings.EMBEDDED_DATABASE, reason="serve's own embedded database")
def test_readyz_and_metrics_of_a_running_service(tmp_path):
    served = Served(tmp_path, ZM_METRICS="true", ZM_METRICS_TOKEN="scrape-me")
    try:
        served.wait_ready()
        # Ready once the worker's first heartbeat is in: its processes run at niceness 15 and
        # start slowly on a machine the rest of the suite keeps busy (as test_supervision's).
        wait_for(lambda: request(f"{served.url}/readyz")[0] == 200, timeout=120, what="readiness")
        token = served.create_user_with_token("metered", "metered password")
        auth = {"Authorization": f"Bearer {token}"}
        body = {"content": "Deploys run from the release branch only.", "kind": "convention"}
        assert (
            request(f"{served.url}/api/v1/memories", method="POST", body=body, headers=auth)[0]
            == 201
        )
        status, _, _ = request(
            f"{served.url}/api/v1/recall", method="POST", body={"query": "deploys"}, headers=auth
        )
        assert status == 200

        assert request(f"{served.url}/metrics")[0] == 401
        assert request(f"{served.url}/metrics", headers={"Authorization": "Bearer nope"})[0] == 401
        scrape = {"Authorization": "Bearer scrape-me"}
        status, headers, text = request(f"{served.url}/metrics", headers=scrape)
        assert status == 200 and headers["Content-Type"].startswith("text/plain")

        def operations_counted() -> str | None:
            """The scrape once both calls' operations are counted: each is counted with its
            activity row, which is written after the answer is on its way."""
            text = request(f"{served.url}/metrics", headers=scrape)[2]
            counted = {
                metric(text, "zm_operation_duration_seconds_count", operation=operation)
                for operation in ("remember", "recall")
            }
            return text if None not in counted else None

        text = wait_for(operations_counted, timeout=30, what="the operations counted")
        route = {"method": "POST", "route": "api/v1/memories", "status": "201"}
        assert metric(text, "zm_http_requests_total", **route) == 1
        assert metric(text, "zm_http_request_duration_seconds_count", route="api/v1/recall") == 1
        assert metric(text, "zm_operation_duration_seconds_count", operation="remember") == 1
        assert metric(text, "zm_operation_duration_seconds_count", operation="recall") == 1
        assert metric(text, "zm_queue_depth") is not None
        assert metric(text, "zm_memories", translation_status="skipped") == 1
        status, _, _ = request(f"{served.url}/mcp", method="POST", body={}, headers={})
        assert status == 401
        _, _, text = request(f"{served.url}/metrics", headers=scrape)
        assert metric(text, "zm_http_requests_total", route="mcp", status="401") == 1

        # Counts live in files per process: a web process that died still counts once replaced.
        served.child("zeromemory.web").send_signal(signal.SIGKILL)
        wait_for(served.answers, timeout=90, what="the restarted web process")
        status, _, text = request(f"{served.url}/metrics", headers=scrape)
        assert status == 200
        assert metric(text, "zm_http_requests_total", **route) == 1
        assert served.stop() == 0
        assert served.processes() == []
    finally:
        served.cleanup()


@pytest.mark.django_db(transaction=True)
def test_backup_and_restore_bring_back_the_data_as_it_was(tmp_path):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from zeromemory.management.commands.backup import postgres_bin

    users = get_user_model().objects
    users.create_user("kept", password="kept password")
    target = tmp_path / "backups" / "zm.dump"
    call_command("backup", str(target), stdout=io.StringIO())
    listing = subprocess.run(
        [str(postgres_bin("pg_restore")), "--list", str(target)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "TABLE public memories_memory" in listing and "EXTENSION - vector" in listing

    users.create_user("after the backup", password="later password")
    call_command("restore", str(target), noinput=True, stdout=io.StringIO())
    assert set(users.values_list("username", flat=True)) == {"kept"}

    # A database restored once backs up and restores again the same way.
    again = tmp_path / "backups" / "again.dump"
    call_command("backup", str(again), stdout=io.StringIO())
    users.create_user("after the second backup", password="later password")
    call_command("restore", str(again), noinput=True, stdout=io.StringIO())
    assert set(users.values_list("username", flat=True)) == {"kept"}

    # A dump that is not one fails before anything is replaced.
    broken = tmp_path / "backups" / "broken.dump"
    broken.write_bytes(b"PGDMP not really a dump")
    with pytest.raises(CommandError, match="pg_restore failed"):
        call_command("restore", str(broken), noinput=True, stdout=io.StringIO())
    assert set(users.values_list("username", flat=True)) == {"kept"}
