"""memories.activity.batched: the activity rows of calls answered through the serving bridge go
in together, in one statement, from the process's writer thread or before a reader of the same
process reads them; outside the bridge a call's row is written at once."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.core.wsgi import get_wsgi_application
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from memories.activity import batched
from memories.models import ActivityLog
from tests.factories import make_token
from tests.served import wait_for
from zeromemory.core.wsgi_bridge import WSGIBridge

pytestmark = pytest.mark.django_db(transaction=True)  # the bridge's threads read what is committed

QUERIES = ("where do deploy settings live", "which branch do deploys need", "who owns billing")


def closing(app):
    """The Django application, each thread's connection closed after its request (the bridge's
    threads end with the test)."""

    def application(environ, start_response):
        try:
            return app(environ, start_response)
        finally:
            connections.close_all()

    return application


def served(token: str, requests: list[tuple[str, str, dict | None]]) -> list[tuple[int, dict]]:
    """Each (method, path, body) through the bridge in turn, as a web process serves it: the
    status and JSON of each answer."""

    async def run() -> list[tuple[int, dict]]:
        bridge = WSGIBridge(closing(get_wsgi_application()), workers=2, hold_bytes=1 << 20)
        answers = []
        for method, path, body in requests:
            raw = json.dumps(body).encode() if body is not None else b""
            incoming = [{"type": "http.request", "body": raw, "more_body": False}]
            sent: list[dict] = []

            async def receive(incoming=incoming):
                return incoming.pop(0) if incoming else {"type": "http.disconnect"}

            async def send(message, sent=sent):
                sent.append(message)

            path, _, query = path.partition("?")
            scope = {
                "type": "http",
                "method": method,
                "path": path,
                "query_string": query.encode(),
                "http_version": "1.1",
                "headers": [
                    (b"host", b"testserver"),
                    (b"authorization", f"Bearer {token}".encode()),
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(raw)).encode()),
                ],
                "server": ("127.0.0.1", 8000),
                "client": ("127.0.0.1", 5000),
            }
            await bridge(scope, receive, send)
            body_message = next(m for m in sent if m["type"] == "http.response.body")
            answers.append((sent[0]["status"], json.loads(body_message["body"])))
        bridge.executor.shutdown()
        return answers

    return asyncio.run(run())


def recalls(token: str) -> list[tuple[int, dict]]:
    return served(token, [("POST", "/api/v1/recall", {"query": query}) for query in QUERIES])


def written_by_the_writer() -> None:
    """Every recall's row, inserted by the writer thread (nothing in the test writes them)."""
    wait_for(
        lambda: ActivityLog.objects.filter(operation="recall").count() == len(QUERIES),
        timeout=30,
        what="the writer thread's insert",
    )


def test_answered_rows_go_in_together_in_one_statement(tenancy, monkeypatch):
    monkeypatch.setattr(batched, "FLUSH_SECONDS", 600.0)  # only what the test asks writes them
    token = make_token(tenancy.owner)
    assert [status for status, _ in recalls(token)] == [200, 200, 200]
    assert not ActivityLog.objects.filter(operation="recall").exists()  # pending in the process

    with CaptureQueriesContext(connection) as written:
        batched.flush()
    [statement] = written.captured_queries
    assert "INSERT INTO" in statement["sql"] and "memories_activitylog" in statement["sql"]
    rows = ActivityLog.objects.filter(operation="recall").order_by("public_id")
    assert [row.query for row in rows] == list(QUERIES)  # in the order they were answered
    assert {(row.user_id, row.surface) for row in rows} == {(tenancy.owner.pk, "api")}


def test_a_reader_of_the_same_process_sees_the_rows_of_the_calls_before_it(tenancy, monkeypatch):
    monkeypatch.setattr(batched, "FLUSH_SECONDS", 600.0)
    token = make_token(tenancy.owner)
    answers = served(
        token,
        [
            *[("POST", "/api/v1/recall", {"query": query}) for query in QUERIES],
            ("GET", "/api/v1/activity?operation=recall", None),
        ],
    )
    status, listed = answers[-1]
    assert status == 200
    assert sorted(item["query"] for item in listed["results"]) == sorted(QUERIES)


def test_the_writer_writes_the_pending_rows_by_itself(tenancy, monkeypatch):
    monkeypatch.setattr(batched, "FLUSH_SECONDS", 0.05)
    token = make_token(tenancy.owner)
    recalls(token)
    written_by_the_writer()


def test_enough_pending_rows_are_written_without_waiting_for_the_oldest(tenancy, monkeypatch):
    monkeypatch.setattr(batched, "FLUSH_SECONDS", 600.0)
    monkeypatch.setattr(batched, "FLUSH_ROWS", len(QUERIES))
    token = make_token(tenancy.owner)
    recalls(token)
    written_by_the_writer()


def test_outside_the_bridge_a_row_is_written_at_once(tenancy, api):
    response = api(tenancy.owner).post("/api/v1/recall", {"query": QUERIES[0]}, format="json")
    assert response.status_code == 200
    assert ActivityLog.objects.filter(operation="recall", query=QUERIES[0]).exists()


def test_a_reader_in_a_transaction_keeps_its_commit_waiting_for_the_wal(tenancy, monkeypatch):
    monkeypatch.setattr(batched, "FLUSH_SECONDS", 600.0)
    recalls(make_token(tenancy.owner))
    with transaction.atomic(), connection.cursor() as cursor:
        batched.flush()
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
    assert ActivityLog.objects.filter(operation="recall").count() == len(QUERIES)
