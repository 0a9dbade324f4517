"""Recall's relevance floor and same-conversation lift, through REST, MCP and the services: an
answer that says nothing relevant was found, `nearest` for the nearest anyway, build_context
without what falls below the floor, the activity row (its outcome and steps) and the insights'
queries that found nothing."""

from __future__ import annotations

import pytest

from memories.insights.fold import insights_fold
from memories.models import ActivityLog
from memories.recall.context import build_context
from memories.recall.recall import recall
from memories.recall.relevance import query_names
from memories.services.remember import RememberInput, memory_remember_many
from tests.factories import make_token
from tests.memories.mcp_support import ok, over_http
from tests.memories.recall_support import remember_all
from zeromemory.core.actor import Actor

ENGINEERING = [
    ("Deploys go out with blue-green releases behind the load balancer.", "decision"),
    ("Logs go to stderr in JSON, one object per line.", "convention"),
    ("The billing service retries webhooks five times with exponential backoff.", "decision"),
    ("Never run migrations by hand on the primary database.", "gotcha"),
    ("Releases are cut on Tuesdays after the standup.", "convention"),
    ("Use UTC timestamps everywhere in the API.", "convention"),
    ("The staging cluster is rebuilt every night at 2am.", "fact"),
]
NONSENSE = "zqxv kwyjibo flurble"


@pytest.fixture
def engineering(tenancy, team):
    return remember_all(tenancy.owner, ENGINEERING, scope=team)


def post_recall(client, body):
    return client.post("/api/v1/recall", body, format="json")


def last_row(user, operation="recall"):
    return ActivityLog.objects.filter(user=user, operation=operation).latest("id")


def test_nothing_relevant_is_an_empty_answer_that_says_so(tenancy, api, team, engineering):
    client = api(tenancy.owner)
    response = post_recall(client, {"query": NONSENSE, "scopes": [team]})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["query"] == NONSENSE
    assert body["results"] == [] and body["nothing_relevant"] is True
    assert "Nothing relevant found" in body["notice"] and "nearest: true" in body["notice"]

    row = last_row(tenancy.owner)
    assert row.query == NONSENSE and row.outcome == "empty" and row.results == []
    assert row.steps == {"floor": {"below": len(ENGINEERING), "nothing_relevant": True}}

    # A question about a name the scope never mentions finds nothing either.
    named = post_recall(client, {"query": "When did Dana's team adopt Kafka?", "scopes": [team]})
    assert named.json()["results"] == [] and named.json()["nothing_relevant"] is True


def test_nearest_answers_the_nearest_anyway_and_says_none_is_relevant(
    tenancy, api, team, engineering
):
    client = api(tenancy.owner)
    response = post_recall(client, {"query": NONSENSE, "scopes": [team], "nearest": True, "k": 3})
    assert response.status_code == 200, response.json()
    body = response.json()
    assert len(body["results"]) == 3 and body["nothing_relevant"] is True
    assert not any(hit["relevant"] for hit in body["results"])
    assert "nearest" in body["notice"]
    row = last_row(tenancy.owner)
    # Still a query that found nothing; its nearest are not counted as recalled.
    assert row.outcome == "empty" and row.options["nearest"] is True and len(row.results) == 3
    assert row.pending_recalls == []
    assert row.steps == {"floor": {"below": 0, "nothing_relevant": True}}


def test_a_relevant_query_keeps_its_answer_and_leaves_out_the_noise(
    tenancy, api, team, engineering
):
    response = post_recall(api(tenancy.owner), {"query": "how do webhook retries work"})
    body = response.json()
    assert body["nothing_relevant"] is False and body["notice"] is None
    assert body["results"][0]["content"] == ENGINEERING[2][0]
    assert all(hit["relevant"] for hit in body["results"])
    assert len(body["results"]) < len(ENGINEERING)  # the unrelated memories fell below
    row = last_row(tenancy.owner)
    assert row.outcome == "hit" and row.steps["floor"]["nothing_relevant"] is False
    assert row.steps["floor"]["below"] == len(ENGINEERING) - len(body["results"])


def test_the_insights_count_a_recall_that_found_nothing(tenancy, api, team, engineering):
    client = api(tenancy.owner)
    post_recall(client, {"query": NONSENSE, "scopes": [team]})
    post_recall(client, {"query": "kwyjibo flurble", "scopes": [team], "nearest": True})
    post_recall(client, {"query": "webhook retries", "scopes": [team]})
    insights_fold(days=1)
    response = client.get("/api/v1/insights", {"scope": team, "days": 7})
    assert response.status_code == 200, response.content
    quality = response.json()["quality"]
    assert quality["empty_reads"] == 2
    assert {q["query"] for q in quality["empty_queries"]} == {NONSENSE, "kwyjibo flurble"}


def test_build_context_leaves_out_what_falls_below_the_floor(tenancy, team, engineering):
    actor = Actor(user=tenancy.owner)
    context = build_context(actor=actor, topic=NONSENSE, scopes=[team])
    [relevant] = [s for s in context.sections if s.name == "relevant"]
    assert relevant.rows == []
    row = last_row(tenancy.owner, "build_context")
    assert row.outcome == "empty" and row.steps["floor"]["nothing_relevant"] is True

    context = build_context(actor=actor, topic="webhook retries in billing", scopes=[team])
    [relevant] = [s for s in context.sections if s.name == "relevant"]
    shown = [row.candidate.content for row in relevant.rows]
    assert shown[0] == ENGINEERING[2][0] and len(shown) < len(ENGINEERING)
    assert last_row(tenancy.owner, "build_context").outcome == "hit"


def test_memories_of_a_strong_hits_conversation_are_lifted(tenancy, team):
    written = [
        ("The billing export job runs every Friday at 18:00 UTC.", "sess-billing"),
        ("It writes its CSV files to the finance bucket.", "sess-billing"),
        ("Office plants get watered on Mondays.", "sess-office"),
    ]
    requests = [
        RememberInput(content=content, kind="fact", scope=team, conversation_id=conversation)
        for content, conversation in written
    ]
    results = memory_remember_many(actor=Actor(user=tenancy.owner), requests=requests)
    export, bucket, plants = (item.result.memory for item in results)
    actor = Actor(user=tenancy.owner)

    hits = recall(actor=actor, query="when does the billing export run", scopes=[team])
    found = [hit.id for hit in hits]
    # The export answers; the bucket, written in its conversation, comes with it; the plants
    # (another conversation, as far from the query) stay out.
    assert found == [export.public_id, bucket.public_id]
    assert all(hit.relevant for hit in hits)
    assert last_row(tenancy.owner).steps["session"] == {"lifted": [bucket.public_id]}

    # Nothing relevant: nothing to lift, however the conversations are shared.
    assert recall(actor=actor, query=NONSENSE, scopes=[team]) == []
    assert "session" not in last_row(tenancy.owner).steps
    assert plants.public_id not in found


def test_query_names_are_capitalised_words_that_do_not_open_a_sentence():
    assert (
        query_names("When did Caroline go to the LGBTQ group? And Dana.") == "Caroline LGBTQ Dana"
    )
    assert query_names("how should I label refs in the UI") == "UI"
    assert query_names('Is "Kafka" used by billing-svc') == "Kafka"
    assert query_names("kubernetes autoscaling policy") == ""


@pytest.mark.django_db(transaction=True)
def test_mcp_recall_says_nothing_relevant_was_found(web_url, tenancy, kinds_seeded):
    team = tenancy.team.public_id
    remember_all(tenancy.owner, ENGINEERING[:3], scope=team)

    async def script(session):
        return {
            "empty": ok(await session.call_tool("recall", {"query": NONSENSE, "scopes": [team]})),
            "nearest": ok(
                await session.call_tool(
                    "recall", {"query": NONSENSE, "scopes": [team], "nearest": True}
                )
            ),
            "hit": ok(await session.call_tool("recall", {"query": "webhook retries billing"})),
        }

    seen = over_http(web_url, make_token(tenancy.owner), script)
    assert seen["empty"]["results"] == [] and seen["empty"]["nothing_relevant"] is True
    assert seen["empty"]["notice"].startswith("Nothing relevant found")
    assert len(seen["nearest"]["results"]) == 3 and seen["nearest"]["nothing_relevant"] is True
    assert seen["hit"]["nothing_relevant"] is False and seen["hit"]["notice"] is None
    assert seen["hit"]["results"][0]["relevant"] is True
