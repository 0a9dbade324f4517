"""Every way a lost database reaches a request answers 503 `unavailable`, on REST, MCP and the
dashboard, not only a connection the driver saw close.

Behind PgBouncer a restarting primary does not close the client's connection: PgBouncer answers
the statement with an error of its own (`server conn crashed?`, SQLSTATE 08P01) or relays the
server's `the database system is starting up` (57P03) on a connection that stays open. Here the
database itself raises those errors from a trigger, on the very statement a write runs, and a
third trigger terminates the request's own backend in the middle of its write. The tests run
in autocommit, as the server does (no test transaction around the request).
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from django.db import connection
from django.test import Client

from memories.models import Memory
from tests.factories import make_token
from tests.mcp_inproc import call_tool

pytestmark = pytest.mark.django_db(transaction=True)

FAULTS = {
    "pgbouncer: server conn crashed": (
        "RAISE EXCEPTION 'server conn crashed?' USING ERRCODE = '08P01'"
    ),
    "pgbouncer: cannot connect": (
        "RAISE EXCEPTION 'pgbouncer cannot connect to server' USING ERRCODE = '08P01'"
    ),
    "starting up": ("RAISE EXCEPTION 'the database system is starting up' USING ERRCODE = '57P03'"),
    "shutting down": (
        "RAISE EXCEPTION 'the database system is shutting down' USING ERRCODE = '57P03'"
    ),
    "connection failure": "RAISE EXCEPTION 'connection failure' USING ERRCODE = '08006'",
    "terminated mid-request": "PERFORM pg_terminate_backend(pg_backend_pid())",
}


@contextmanager
def failing(table: str, events: str, fault: str):
    """A trigger that makes every `events` statement on `table` fail as `fault` does."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION zm_test_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"{FAULTS[fault]}; RETURN NEW; END $$"
        )
        cursor.execute(
            f"CREATE TRIGGER zm_test_fault BEFORE {events} ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION zm_test_fault()"
        )
    try:
        yield fault
    finally:
        connection.close()  # the terminated one, if it was
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TRIGGER IF EXISTS zm_test_fault ON {table}")
            cursor.execute("DROP FUNCTION IF EXISTS zm_test_fault()")


@pytest.fixture(params=list(FAULTS))
def fault(request, tenancy, kinds_seeded):
    """Every insert of a memory fails as the named fault does."""
    with failing("memories_memory", "INSERT", request.param):
        yield request.param


def write(tenancy) -> dict:
    return {
        "content": "Deploys run from the release branch only.",
        "kind": "convention",
        "scope": tenancy.team.public_id,
    }


def test_rest_answers_unavailable(tenancy, fault):
    response = tenancy.client(tenancy.writer).post(
        "/api/v1/memories", write(tenancy), format="json"
    )
    assert response.status_code == 503, (fault, response.content)
    assert response.json()["error"]["code"] == "unavailable"
    assert int(response["Retry-After"]) > 0
    connection.close()
    assert not Memory.objects.exists()


def test_mcp_answers_unavailable(tenancy, fault):
    result = call_tool(make_token(tenancy.writer), "remember", write(tenancy))
    assert result.is_error, (fault, result)
    assert json.loads(result.content[0].text)["error"]["code"] == "unavailable", fault


def test_the_dashboard_answers_unavailable(tenancy, fault):
    browser = Client()
    browser.force_login(tenancy.writer)
    response = browser.post("/remember/", write(tenancy))
    assert response.status_code == 503, (fault, response.status_code)
    assert int(response["Retry-After"]) > 0


# Before the view: the token's first use is recorded in authentication, a sign-in saves its
# session.
BEFORE_THE_VIEW = ["pgbouncer: server conn crashed", "terminated mid-request"]


@pytest.mark.parametrize("name", BEFORE_THE_VIEW)
def test_an_outage_in_authentication_answers_unavailable(tenancy, name):
    secret = make_token(tenancy.writer)  # never used yet: its first use is written
    with failing("scopes_apitoken", "UPDATE", name):
        response = Client().get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {secret}")
        assert response.status_code == 503, (name, response.content)
        assert response.json()["error"]["code"] == "unavailable"


@pytest.mark.parametrize("name", BEFORE_THE_VIEW)
def test_an_outage_saving_the_session_answers_unavailable(tenancy, name):
    tenancy.writer.set_password("a long pass phrase 42")
    tenancy.writer.save()
    with failing("django_session", "INSERT OR UPDATE", name):
        response = Client().post(
            "/login/", {"username": "writer", "password": "a long pass phrase 42"}
        )
        assert response.status_code == 503, (name, response.status_code)
        assert int(response["Retry-After"]) > 0
