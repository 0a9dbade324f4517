"""Reads on a streaming replica (ZM_DATABASE_REPLICA_URLS) with read-your-writes: a user's recall
right after their own remember finds it, although the replica has not replayed it; after the
read-your-writes window their reads come from the replica; a replica that stops is skipped."""

from __future__ import annotations

import json

import pytest

from tests.served import Served, request, wait_for

pytestmark = pytest.mark.slow

WINDOW = 3


def call(served: Served, token: str, method: str, path: str, body=None) -> tuple[int, dict]:
    status, _, text = request(
        f"{served.url}{path}",
        method=method,
        body=body,
        headers={"Authorization": f"Bearer {token}"},
    )
    return status, json.loads(text) if text else {}


def recalled(served: Served, token: str, query: str) -> list[str]:
    status, answer = call(served, token, "POST", "/api/v1/recall", {"query": query})
    assert status == 200, answer
    return [hit["id"] for hit in answer["results"]]


@pytest.fixture
def served_on_replica(tmp_path, primary_and_replica):
    primary, replica = primary_and_replica
    served = Served(
        tmp_path,
        DATABASE_URL=primary.url(),
        ZM_DATABASE_REPLICA_URLS=replica.url(),
        # The replica stays in use however far behind it is: this test pauses its replay.
        ZM_REPLICA_MAX_LAG_SECONDS="3600",
        ZM_READ_YOUR_WRITES_SECONDS=str(WINDOW),
        ZM_WEB_PROCESSES="1",
    )
    try:
        served.wait_ready()
        yield served, primary, replica
    finally:
        served.stop()
        served.cleanup()


def test_a_recall_right_after_a_remember_finds_it(served_on_replica):
    served, primary, replica = served_on_replica
    token = served.create_user_with_token("reader", "replica test password")
    fact = "The staging cluster rotates its TLS certificates every Tuesday at noon."
    wait_for(
        lambda: replica.sql("SELECT count(*) FROM auth_user WHERE username = 'reader'") == "1",
        timeout=30,
        what="the replica to replay the user",
    )
    replica.sql("SELECT pg_wal_replay_pause()", database="postgres")

    body = {"content": fact, "kind": "fact"}
    status, written = call(served, token, "POST", "/api/v1/memories", body)
    assert status == 201, written
    # The replica has not replayed it; read-your-writes sends this user's reads to the primary.
    assert (
        replica.sql("SELECT count(*) FROM memories_memory WHERE public_id = %s", [written["id"]])
        == "0"
    )
    assert written["id"] in recalled(served, token, "When are TLS certificates rotated?")
    assert call(served, token, "GET", f"/api/v1/memories/{written['id']}")[0] == 200

    # After the window this user's reads come from the replica, which is behind.
    wait_for(
        lambda: written["id"] not in recalled(served, token, "TLS certificates rotated"),
        timeout=WINDOW + 10,
        what="reads to move to the (paused) replica",
    )
    assert call(served, token, "GET", f"/api/v1/memories/{written['id']}")[0] == 404

    replica.sql("SELECT pg_wal_replay_resume()", database="postgres")
    wait_for(
        lambda: written["id"] in recalled(served, token, "TLS certificates rotated"),
        timeout=30,
        what="the replica to catch up",
    )

    # A replica that stops is skipped: at most the read in flight fails (503), then the
    # primary answers.
    replica.stop("fast")
    answers = [call(served, token, "POST", "/api/v1/recall", {"query": "TLS"})[0] for _ in range(5)]
    assert answers.count(200) >= 4 and set(answers) <= {200, 503}, answers
    assert written["id"] in recalled(served, token, "TLS certificates rotated")
