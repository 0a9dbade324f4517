"""The operator's doors: metrics and every bearer door with a non-ASCII token, and health probes
that do not echo the database's error."""

from __future__ import annotations

import json
import subprocess
import sys

from django.test import Client, override_settings

from tests.helpers import child_env
from tests.mcp_inproc import call_tool, structured
from tests.security.surfaces import API_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.world import build_world
from tests.served import BASE_DIR, free_port

# As a server hands it on: the header's UTF-8 bytes read as Latin-1 (PEP 3333, and ASGI servers).
NON_ASCII_BEARER = "Bearer " + "ключ-é".encode().decode("latin-1")


@override_settings(METRICS=True, METRICS_TOKEN="scrape-me")
def test_metrics_answer_401_to_a_non_ascii_bearer(db):
    answer = Client().get("/metrics", HTTP_AUTHORIZATION=NON_ASCII_BEARER)
    assert answer.status_code == 401 and answer["WWW-Authenticate"].startswith("Bearer")
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me").status_code == 200


def test_every_api_route_and_tool_answers_401_to_a_non_ascii_bearer(db, kinds_seeded):
    world = build_world()
    for row in API_ROWS:
        client = Client(HTTP_AUTHORIZATION=NON_ASCII_BEARER)
        body = json.dumps(world.fill(row.body)) if row.body else ""
        answer = client.generic(row.method.upper(), world.fill(row.path), body, "application/json")
        assert answer.status_code == 401, (row.id, answer.content[:300])
        assert answer.json()["error"]["code"] == "unauthorized"
    for row in TOOL_ROWS:
        result = call_tool(NON_ASCII_BEARER.split(" ", 1)[1], row.route, world.fill(row.body))
        assert result.is_error and structured(result)["error"]["code"] == "unauthorized", row.id


PROBES = """
import json, django
django.setup()
from django.test import Client
print(json.dumps({path: [r.status_code, r.content.decode()]
                  for path in ("/healthz", "/readyz") for r in [Client().get(path)]}))
"""


def test_health_and_readiness_do_not_echo_the_database_error():
    port = free_port()  # nothing listens there
    url = f"postgres://zm_probe_user:hunter2-pw@127.0.0.1:{port}/zm_probe_db"
    env = dict(child_env(ZM_TESTING="true"), DATABASE_URL=url)
    done = subprocess.run(
        [sys.executable, "-c", PROBES],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout.strip().splitlines()[-1])
    for path, (status, body) in answers.items():
        assert status == 503, (path, body)
        assert json.loads(body)["database"] == "unavailable", (path, body)
        for detail in (str(port), "127.0.0.1", "refused", "zm_probe", "hunter2", "connection"):
            assert detail not in body, (path, detail, body)
    assert str(port) in done.stderr  # the detail is in the server's log
