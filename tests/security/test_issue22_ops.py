"""Issue 22, items 6, 7, 8e and 8f: the sign-in lockout, the bearer doors, the admin's bulk
keep-both and the health probes, each tried as the issue found it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from django.db import transaction
from django.test import Client, override_settings

from memories.hygiene import review
from memories.models import Conflict, ConflictStatus, Relation
from memories.services.remember import RememberInput, memory_remember
from tests.factories import UserFactory
from tests.helpers import child_env
from tests.mcp_inproc import call_tool, structured
from tests.memories.mcp_support import BASE_DIR, free_port
from tests.security.surfaces import API_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.test_races import in_thread_until_it_waits
from tests.security.world import build_world
from zeromemory.core.actor import Actor

PASSWORD = "correct horse battery"


def sign_in(username: str, password: str, ip: str) -> int:
    answer = Client().post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)
    return answer.status_code


# -- 6: a lockout nobody can reset for someone else ----------------------------------------------


@override_settings(AXES_FAILURE_LIMIT=5)
def test_an_attackers_own_sign_ins_do_not_reset_the_victims_failures(db):
    """10 wrong passwords for the victim from one address, with the attacker's own successful
    sign-in from there after the 4th and the 8th: the victim's account is locked all the same."""
    UserFactory(username="victim")
    UserFactory(username="mallory")
    answers = []
    for guess in range(10):
        answers.append(sign_in("victim", f"guess {guess}", ip="10.6.6.6"))
        if guess in (3, 7):
            answers.append(sign_in("mallory", PASSWORD, ip="10.6.6.6"))
    # Mallory's first sign-in comes before the limit; the 5th failure locks the victim's account
    # and the address (Mallory's second sign-in included).
    assert answers == [200] * 4 + [302] + [429] * 7, answers
    assert sign_in("victim", PASSWORD, ip="10.7.7.7") == 429  # the account, from anywhere


@override_settings(AXES_FAILURE_LIMIT=5)
def test_a_persons_success_clears_their_own_failures_from_that_address_only(db):
    UserFactory(username="alice")
    for _ in range(4):
        assert sign_in("alice", "wrong", ip="10.1.1.1") == 200
    assert sign_in("alice", PASSWORD, ip="10.1.1.1") == 302
    for _ in range(4):  # counted from zero again
        assert sign_in("alice", "wrong", ip="10.1.1.1") == 200
    assert sign_in("alice", PASSWORD, ip="10.1.1.1") == 302
    # Failures from another address (someone else may be guessing there) are not cleared.
    for _ in range(4):
        assert sign_in("alice", "wrong", ip="10.2.2.2") == 200
    assert sign_in("alice", PASSWORD, ip="10.1.1.1") == 302
    assert sign_in("alice", "wrong", ip="10.2.2.2") == 429


# -- 7: a bearer the server cannot encode as ASCII -----------------------------------------------

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


# -- 8e: the admin's bulk keep-both meets an item resolved meanwhile ------------------------------


@pytest.mark.django_db(transaction=True)
def test_bulk_keep_both_skips_an_item_resolved_meanwhile_with_a_message(tenancy, kinds_seeded):
    owner = Actor(user=tenancy.owner)
    a, b = (
        memory_remember(
            actor=owner,
            request=RememberInput(content=text, kind="fact", scope=tenancy.team.public_id),
        ).memory
        for text in ("Staging is reset on Mondays.", "Staging is wiped every Monday.")
    )
    conflict = Conflict.objects.create(
        scope=tenancy.team,
        memory_a=a,
        memory_b=b,
        status=ConflictStatus.OPEN,
        verdict=Relation.DUPLICATE,
        confidence=0.8,
    )
    staff = type(tenancy.owner).objects.create_superuser("staff", "s@example.com", "pw-staff-1")
    admin = Client(raise_request_exception=False)
    admin.force_login(staff)
    answers: list[int] = []
    selection = {"action": "keep_both", "_selected_action": [conflict.pk]}
    with transaction.atomic():  # someone resolves it, and has not committed yet
        review.conflict_resolve(actor=owner, conflict=conflict, action="dismiss")
        thread = in_thread_until_it_waits(
            lambda: admin.post("/admin/memories/conflict/", selection).status_code, answers
        )
    thread.join(timeout=30)
    assert answers == [302]
    page = admin.get("/admin/memories/conflict/").content.decode()
    assert "0 conflicts kept both." in page
    assert f"Skipped {conflict.public_id}: This conflict is not open" in page
    conflict.refresh_from_db()
    assert conflict.resolution == "dismiss" and conflict.resolved_by == tenancy.owner


# -- 8f: the probes say the database is down, not why ----------------------------------------------

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
