"""No read path translates or calls an LLM: the query that arrives is the query that runs."""

from __future__ import annotations

import pytest

from memories.models import ActivityLog
from memories.services.remember import RememberInput, memory_remember
from zeromemory.core.actor import Actor


@pytest.fixture
def llm_that_must_not_be_called(fake_anthropic):
    """A configured key and endpoint whose every call fails the test afterwards."""
    yield fake_anthropic
    assert fake_anthropic.requests == [], "a read path called the LLM"


QUERY = "  Wie setzen wir die Staging-Datenbank zurück?  🔁 "


def test_every_read_surface_runs_without_the_llm(tenancy, api, llm_that_must_not_be_called):
    actor = Actor(user=tenancy.owner)
    scope = tenancy.team.public_id
    memory_remember(
        actor=actor,
        request=RememberInput(
            content="The staging database is reset every night at 02:00 UTC.",
            kind="fact",
            scope=scope,
        ),
    )
    german = memory_remember(
        actor=actor,
        request=RememberInput(
            content="Die Staging-Datenbank wird jede Nacht um 02:00 UTC zurückgesetzt.",
            kind="fact",
            scope=scope,
        ),
    ).memory
    assert german.translation_status == "pending"
    client = api(tenancy.owner)
    recall = client.post("/api/v1/recall", {"query": QUERY}, format="json")
    assert recall.status_code == 200, recall.json()
    context = client.post("/api/v1/context", {"topic": QUERY, "max_tokens": 500}, format="json")
    assert context.status_code == 200, context.json()
    assert client.get("/api/v1/briefing").status_code == 200
    assert client.get("/api/v1/activity").status_code == 200
    assert client.get("/api/v1/memories").status_code == 200
    detail = client.get(f"/api/v1/memories/{german.public_id}")
    assert detail.json()["content"] == german.content  # still as written, nothing translated
    logged = ActivityLog.objects.filter(operation__in=["recall", "build_context"]).order_by("id")
    assert [row.query for row in logged] == [QUERY, QUERY]
