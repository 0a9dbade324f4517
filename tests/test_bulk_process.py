"""Bulk requests in processes of their own (zeromemory.core.bulk): `make run` starts a bulk
process below the web processes, a web process hands it each batch of memories (body and answer
streamed through unchanged) and serves everything else itself; with no bulk process listening
it serves a batch itself, and one that fails after taking the batch is answered 502. Read from
the real processes, their database sessions and HTTP."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path

import httpx2
import pytest
from django.conf import settings

from tests.factories import make_token
from tests.helpers import child_env
from tests.served import Served, free_port, start_web, stop_process_group

NICE = 6  # not the default, so the setting is what is read
BULK_SESSIONS = (
    "SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity"
    " WHERE application_name = 'zero-memory bulk'"
)


def batch(count: int, tag: str) -> dict:
    return {
        "items": [
            {"content": f"Bulk fact {tag} number {n}: the nightly export runs at 02:{n:02d}.",
             "kind": "fact"}
            for n in range(count)
        ]
    }  # fmt: skip


def post(url: str, token: str, path: str, body: object, **options) -> httpx2.Response:
    return httpx2.post(
        url + path,
        content=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        timeout=120,
        **options,
    )


# The tests of a whole `serve` (its own embedded database).
served_alone = pytest.mark.skipif(
    not settings.EMBEDDED_DATABASE, reason="serve's own embedded database (no DATABASE_URL)"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One service for the module's served tests, a bulk process beside its web process."""
    served = Served(
        tmp_path_factory.mktemp("bulk"),
        ZM_BULK_PROCESSES="1",
        ZM_BULK_NICE=str(NICE),
        ZM_Q_WORKERS="1",
        ZM_API_RATE="",
    )
    try:
        served.wait_ready()
        served.token = served.create_user_with_token("bulky", "correct horse battery")
        yield served
    finally:
        served.cleanup()


def bulk_sessions(served: Served) -> list[int]:
    """The database sessions of bulk processes (named so by them), by their server's pid."""
    return json.loads(
        served.django(
            "import json\nfrom django.db import connection\n"
            f"cursor = connection.cursor()\ncursor.execute({BULK_SESSIONS!r})\n"
            "print(json.dumps(cursor.fetchone()[0]))\n"
        )
    )


@pytest.mark.slow
@served_alone
def test_the_bulk_process_runs_below_the_web_process(served):
    own = os.getpriority(os.PRIO_PROCESS, 0)
    bulk = served.child("--bulk")
    web = [p for p in served.children_matching("zeromemory.web") if p.pid != bulk.pid]
    assert len(web) == 1 and web[0].nice() == own
    assert bulk.nice() == max(own, NICE)
    if Path("/proc/self/autogroup").exists():  # it leads its own session: so does its group
        group = Path(f"/proc/{bulk.pid}/autogroup").read_text().split()[-1]
        assert int(group) == NICE


@pytest.mark.slow
@served_alone
def test_a_batch_is_served_by_the_bulk_process_and_the_rest_by_the_web_process(served):
    token = served.token
    one = {"content": "Tabs, not spaces.", "kind": "convention"}
    single = post(served.url, token, "/api/v1/memories", one)
    assert single.status_code == 201, single.text
    recall = post(served.url, token, "/api/v1/recall", {"query": "tabs or spaces"})
    assert recall.status_code == 200, recall.text
    assert bulk_sessions(served) == []  # nothing reached the bulk process

    answer = post(served.url, token, "/api/v1/memories/batch", batch(3, "a"))
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert int(answer.headers["content-length"]) == len(answer.content)
    assert len(answer.headers.get_list("date")) == 1  # the web process's server's own
    results = answer.json()["results"]
    assert [item["status"] for item in results] == [201, 201, 201]
    # The bulk process's database session, named, at the database's own priority (lowered, it
    # would hold the pages it locks while others run).
    sessions = bulk_sessions(served)
    assert sessions
    own = os.getpriority(os.PRIO_PROCESS, 0)
    assert {os.getpriority(os.PRIO_PROCESS, pid) for pid in sessions} == {own}
    # Written for good: a recall in the web process finds them.
    found = post(served.url, token, "/api/v1/recall", {"query": "nightly export time"})
    ids = {hit["id"] for hit in found.json()["results"]}
    assert {item["memory"]["id"] for item in results} <= ids


@pytest.mark.slow
@served_alone
def test_a_refused_batch_is_answered_as_the_bulk_process_answers_it(served):
    answer = post(served.url, served.token, "/api/v1/memories/batch", {"items": "nope"})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "validation_failed"
    assert "items" in answer.json()["error"]["details"]
    unsigned = httpx2.post(served.url + "/api/v1/memories/batch", json=batch(1, "x"))
    assert unsigned.status_code == 401
    assert unsigned.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.slow
@served_alone
def test_a_chunked_batch_is_streamed_through(served):
    body = json.dumps(batch(2, "chunked")).encode()

    def pieces():
        yield body[:17]
        yield body[17:]

    answer = httpx2.post(
        served.url + "/api/v1/memories/batch",
        content=pieces(),
        headers={"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"},
        timeout=120,
    )
    assert answer.request.headers.get("transfer-encoding") == "chunked"
    assert answer.status_code == 200, answer.text
    assert [item["status"] for item in answer.json()["results"]] == [201, 201]


@pytest.mark.slow
@served_alone
def test_a_batch_over_the_limit_is_refused_before_it_is_handed_over(served):
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    connection.request(
        "POST",
        "/api/v1/memories/batch",
        body=b"x" * (settings.MAX_BODY_BYTES + 1),
        headers={"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"},
    )
    answer = connection.getresponse()
    assert answer.status == 413
    assert json.loads(answer.read())["error"]["code"] == "validation_failed"


class Peer:
    """A bulk port whose process takes the request, then dies without answering."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.heads: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                with client:
                    self.heads.append(client.recv(65536))

    def close(self) -> None:
        """Stop listening: shutdown wakes the accept that close alone would leave blocked."""
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_a_web_process_serves_a_batch_itself_when_no_bulk_process_takes_it(tenancy, kinds_seeded):
    """No bulk process listening: the batch is served here. One that takes the batch and ends
    without answering: 502, with the error envelope, and the next batch is served again."""
    peer = Peer()
    port = free_port()
    argv = [sys.executable, "-m", "zeromemory.web", "--port", str(port)]
    env = child_env(ZM_API_RATE="", ZM_BULK_PORT=str(peer.port))
    proc, base = start_web(argv, env=env, port=port)
    try:
        token = make_token(tenancy.writer)
        lost = post(base, token, "/api/v1/memories/batch", batch(1, "lost"))
        assert lost.status_code == 502
        assert lost.json()["error"]["code"] == "bulk_unavailable"
        assert peer.heads and peer.heads[0].startswith(b"POST /api/v1/memories/batch HTTP/1.1")
        assert b"authorization: bearer" in peer.heads[0].lower()

        peer.close()  # nothing listens on the bulk port now
        served = post(base, token, "/api/v1/memories/batch", batch(2, "here"))
        assert served.status_code == 200, served.text
        assert [item["status"] for item in served.json()["results"]] == [201, 201]
    finally:
        peer.close()
        out = stop_process_group(proc)
    assert "a bulk request to /api/v1/memories/batch failed" in out
    assert proc.returncode is not None and proc.returncode != -signal.SIGKILL
