"""A kept database connection is checked before each request's first query
(zeromemory.core.postgres): one the server ended is replaced before the request uses it, and a
sound one is used as it is, without a `SELECT 1` on the wire.

The test client leaves connections alone between requests; `close_old_connections()` is what
the server's handler runs when a request starts, and it arms the check again."""

from __future__ import annotations

import re
import time
from pathlib import Path

import psycopg
import pytest
from django.db import close_old_connections, connection

from tests.statements import as_run

pytestmark = pytest.mark.django_db(transaction=True)


def backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def other_connection() -> psycopg.Connection:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    return psycopg.connect(**params, autocommit=True)


def ended(pid: int) -> None:
    """The backend `pid` terminated, and gone once this returns."""
    with other_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the backend did not end"
            time.sleep(0.01)


def test_a_connection_the_server_ended_is_replaced_before_the_request(tenancy):
    client = tenancy.client(tenancy.reader)
    assert client.get("/api/v1/me").status_code == 200
    pid = backend_pid()
    close_old_connections()  # a new request
    ended(pid)

    response = client.get("/api/v1/me")

    assert response.status_code == 200, response.content
    assert backend_pid() != pid


def test_a_sound_connection_is_used_without_a_round_trip_first(tenancy, tmp_path: Path):
    client = tenancy.client(tenancy.reader)
    assert client.get("/api/v1/me").status_code == 200
    pid = backend_pid()
    close_old_connections()  # a new request
    wire = tmp_path / "wire.txt"
    with wire.open("w") as trace:
        connection.connection.pgconn.trace(trace.fileno())
        try:
            response = client.get("/api/v1/me")
        finally:
            connection.connection.pgconn.untrace()

    assert response.status_code == 200, response.content
    assert backend_pid() == pid
    # One entry per message (a message's text may span lines), the client's queries' texts.
    messages = re.split(r"\n(?=\d{4}-\d\d-\d\d )", wire.read_text())
    sent = [m for m in messages if "\tF\t" in m and "\tQuery\t " in m]
    queries = [as_run(m.split("\tQuery\t ", 1)[1].strip()) for m in sent]
    assert any("secret_hash" in query for query in queries)  # the request's own statements
    assert '"SELECT 1"' not in queries


def test_a_connection_in_a_broken_transaction_is_checked_the_long_way(tenancy):
    """Anything but an idle connection with nothing to read gets Django's own check."""
    client = tenancy.client(tenancy.reader)
    assert client.get("/api/v1/me").status_code == 200
    connection.connection.execute("BEGIN")
    with pytest.raises(psycopg.errors.DivisionByZero):
        connection.connection.execute("SELECT 1 / 0")
    assert not connection.is_usable()
    connection.connection.execute("ROLLBACK")
    assert connection.is_usable()
