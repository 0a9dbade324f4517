"""The query's vector is computed beside recall's and build_context's other work, and only for a
caller that is let in: refused calls (no or a wrong token, over the rate limit, bad input) never
make the model run. The scopes are checked while it runs: a scope the caller may not read is
answered as one that does not exist, its vector unused. Whether the model ran is read from the
process's query vectors (`memories.embeddings.query_vectors`), which keep every query embedded."""

from __future__ import annotations

import uuid

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from memories.embeddings import query_vectors
from memories.recall.context import build_context
from memories.recall.recall import recall
from tests.memories.recall_support import remember_all
from zeromemory.core.actor import Actor

ROUTES = (("/api/v1/recall", "query"), ("/api/v1/context", "topic"))


def fresh_query() -> str:
    """A query no test embedded before (the vectors are the process's)."""
    return f"where do the deploy logs go {uuid.uuid4().hex[:8]}"


def embedded(query: str) -> bool:
    return query_vectors().get(query) is not None


@pytest.mark.parametrize(("path", "field"), ROUTES)
def test_an_answered_call_embeds_its_query(tenancy, api, team, path, field):
    remember_all(tenancy.owner, [("Deploy logs go to stderr in JSON.", "convention")], scope=team)
    query = fresh_query()
    response = api(tenancy.owner).post(path, {field: query}, format="json")
    assert response.status_code == 200, response.json()
    assert embedded(query)


@pytest.mark.parametrize(("path", "field"), ROUTES)
def test_a_caller_without_a_valid_token_never_runs_the_model(db, path, field):
    client = APIClient()
    for authorization in (None, "Bearer zm_not_a_token"):
        if authorization:
            client.credentials(HTTP_AUTHORIZATION=authorization)
        query = fresh_query()
        response = client.post(path, {field: query}, format="json")
        assert response.status_code == 401
        assert not embedded(query)


@override_settings(API_RATE="1/day")  # a daily window: no boundary falls inside the test
@pytest.mark.parametrize(("path", "field"), ROUTES)
def test_a_caller_over_the_rate_limit_never_runs_the_model(tenancy, api, path, field):
    client = api(tenancy.owner)
    assert client.get("/api/v1/me").status_code == 200
    query = fresh_query()
    response = client.post(path, {field: query}, format="json")
    assert response.status_code == 429
    assert not embedded(query)


@pytest.mark.parametrize(("path", "field"), ROUTES)
def test_refused_input_never_runs_the_model(tenancy, api, path, field):
    client = api(tenancy.outsider)
    refusals = (
        {"max_tokens": 1} if field == "topic" else {"k": 0},
        {"unknown": True},
        {"kinds": ["no-such-kind"]},
    )
    for extra in refusals:
        query = fresh_query()
        response = client.post(path, {field: query, **extra}, format="json")
        assert response.status_code == 400, response.json()
        assert not embedded(query)


@pytest.mark.parametrize(("path", "field"), ROUTES)
def test_a_foreign_scope_is_answered_as_one_that_does_not_exist(tenancy, api, team, path, field):
    """Its model ran (the scopes are checked during the pass); nothing of the scope comes back."""
    client = api(tenancy.outsider)
    answers = []
    for scope in (team, "scp_doesnotexist"):
        response = client.post(path, {field: fresh_query(), "scopes": [scope]}, format="json")
        assert response.status_code == 404, response.json()
        body = response.json()
        answers.append((body["error"]["code"], body["error"].get("field")))
    assert answers[0] == answers[1]


def test_in_process_answers_match_over_rest(tenancy, api, team):
    """The vector begun beside the other statements gives the same answer whichever door."""
    remember_all(
        tenancy.owner,
        [
            ("Deploy logs go to stderr in JSON.", "convention"),
            ("We chose PostgreSQL for the billing service.", "decision"),
            ("Open question: who owns the billing runbook?", "open_question"),
        ],
        scope=team,
    )
    actor = Actor(user=tenancy.owner)
    client = api(tenancy.owner)
    query = "which database does billing use"
    rest = client.post("/api/v1/recall", {"query": query}, format="json").json()["results"]
    hits = recall(actor=actor, query=query)
    assert [hit["id"] for hit in rest] == [hit.id for hit in hits]
    answer = client.post("/api/v1/context", {"topic": query}, format="json").json()
    context = build_context(actor=actor, topic=query).answer().model_dump(mode="json")
    assert answer["markdown"] == context["markdown"]
