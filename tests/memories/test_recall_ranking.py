"""Ranking by term rarity: idf within the readable scopes, any-term rows, recall and context."""

from __future__ import annotations

import pytest

from memories.recall.recall import recall
from tests.factories import make_scope
from tests.memories.recall_support import remember_all
from zeromemory.core.actor import Actor

QUESTION = "which project is called kestrel on the deploy script server"
COMMON = [(f"The deploy script runs on the build server, note {i}.", "fact") for i in range(12)]
TARGET = ("Kestrel is the project name of the payments rewrite.", "fact")


@pytest.fixture
def corpus(tenancy):
    """Twelve memories sharing three of the question's words, one sharing its two rare ones."""
    team = tenancy.team.public_id
    memories = remember_all(tenancy.owner, [*COMMON, TARGET], scope=team)
    return memories[-1]


def test_a_rare_term_outweighs_common_ones_when_no_memory_has_every_term(tenancy, api, corpus):
    # The common memories match more of the question's terms (deploy, script, server) than the
    # target (project, kestrel), but those terms are in almost every memory and say little.
    response = api(tenancy.owner).post("/api/v1/recall", {"query": QUESTION}, format="json")
    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    assert results[0]["id"] == corpus.public_id and results[0]["fts_matched"]
    text_only = recall(actor=Actor(user=tenancy.owner), query=QUESTION, mode="fulltext")
    assert text_only[0].id == corpus.public_id
    assert len(text_only) == 10 and all(hit.fts_matched for hit in text_only)


def test_build_context_puts_the_rare_term_memory_first(tenancy, api, corpus):
    response = api(tenancy.owner).post(
        "/api/v1/context", {"topic": QUESTION, "max_tokens": 400}, format="json"
    )
    assert response.status_code == 200, response.json()
    relevant = response.json()["sections"][0]
    assert relevant["name"] == "relevant"
    assert relevant["rows"][0]["id"] == corpus.public_id


def test_term_rarity_is_counted_in_the_readable_scopes_only(tenancy, corpus):
    owner = Actor(user=tenancy.owner)
    before = [(hit.id, hit.score) for hit in recall(actor=owner, query=QUESTION)]
    # In the outsider's scope "kestrel" and "project" are everywhere; for the owner they stay rare.
    foreign = make_scope(owner=tenancy.outsider, slug="elsewhere")
    remember_all(
        tenancy.outsider,
        [(f"Kestrel project status {i}: on track.", "fact") for i in range(40)],
        scope=foreign.public_id,
    )
    assert [(hit.id, hit.score) for hit in recall(actor=owner, query=QUESTION)] == before
    outsider = recall(actor=Actor(user=tenancy.outsider), query=QUESTION)
    assert {hit.scope for hit in outsider} == {foreign.public_id}
