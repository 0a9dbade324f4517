"""recall(): fusion, ranking, decay, kinds, full text, scopes, windows; REST in test_recall_api."""

from __future__ import annotations

import numpy as np
import pytest

from memories import tasks
from memories.embeddings import embed_query
from memories.models import Memory
from memories.recall import inputs as search
from memories.recall import statement as ranking
from memories.recall.recall import recall
from memories.services import lifecycle
from tests.factories import make_scope
from tests.memories.recall_support import age, ids, remember_all
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed

TEXT = ranking.PRODUCT.text_weight


@pytest.fixture
def owner(tenancy):
    return Actor(user=tenancy.owner)


def test_a_hit_says_what_it_is(tenancy, owner, team):
    [memory] = remember_all(
        tenancy.owner, [("Deploys go out with blue-green releases.", "decision")], scope=team
    )
    [hit] = recall(actor=owner, query="blue-green releases")
    assert hit.as_dict().keys() == {
        "id",
        "content",
        "kind",
        "scope",
        "score",
        "similarity",
        "fts_matched",
        "age_days",
        "has_original",
        "disputed",
        "stale",
        "relevant",
    }
    assert (hit.id, hit.kind, hit.scope, hit.content) == (
        memory.public_id,
        "decision",
        team,
        memory.content,
    )
    assert hit.fts_matched is True and hit.has_original is False
    assert 0.5 < hit.similarity <= 1.0 and 0 <= hit.age_days < 0.01


def test_score_is_the_fused_legs_times_weight_and_decay(tenancy, owner, team):
    [decision] = remember_all(
        tenancy.owner, [("Rotate the signing keys every ninety days.", "decision")], scope=team
    )
    [hit] = recall(actor=owner, query="rotate signing keys")
    # First in both legs (each leg's score 1, weighted 1 : TEXT and divided by 1 + TEXT), weight
    # 1.0, no age.
    assert hit.score == pytest.approx(1.0, rel=1e-4)

    [hit] = recall(actor=owner, query="how often do credentials get replaced")
    assert hit.fts_matched is False  # found by meaning alone: one leg
    assert hit.score == pytest.approx(1 / (1 + TEXT), rel=1e-4)

    Memory.objects.filter(pk=decision.pk).update(kind_id="episode")  # weight 0.7, half-life 30
    age(decision, 30)
    [hit] = recall(actor=owner, query="rotate signing keys")
    assert hit.age_days == pytest.approx(30, abs=0.01)
    assert hit.score == pytest.approx(1.0 * 0.7 * 0.5, rel=1e-3)


def test_both_legs_beat_one_leg(tenancy, owner, team):
    both, meaning, words = remember_all(
        tenancy.owner,
        [
            ("The nightly VACUUM of the orders table runs at 3am.", "fact"),
            ("Database maintenance that reclaims dead rows happens overnight.", "fact"),
            ("Orders over 500 euros need a second approval.", "fact"),
        ],
        scope=team,
    )
    # The nearest anyway: the memory found by meaning alone is below the relevance floor.
    hits = recall(actor=owner, query="when does VACUUM run on the orders table", nearest=True)
    assert hits[0].id == both.public_id
    assert hits[0].fts_matched and hits[0].score > max(h.score for h in hits[1:])
    by_id = {hit.id: hit for hit in hits}
    assert meaning.public_id in by_id and words.public_id in by_id
    # Rows matching some of the terms take part too, below the one that matches them all.
    assert [hit.id for hit in hits if hit.fts_matched] == [both.public_id, words.public_id]
    assert not by_id[meaning.public_id].fts_matched


def test_decay_sinks_old_memories_of_fast_decaying_kinds(tenancy, owner, team):
    task, decision = remember_all(
        tenancy.owner,
        [
            ("Migrate the billing cron jobs to the scheduler.", "task"),
            ("Billing cron jobs moved to the scheduler service.", "decision"),
        ],
        scope=team,
    )
    fresh = {hit.id: hit.score for hit in recall(actor=owner, query="billing cron scheduler")}
    age(task, 28)  # two half-lives of a task
    age(decision, 28)  # almost nothing for a decision (ten-year half-life)
    old = {hit.id: hit.score for hit in recall(actor=owner, query="billing cron scheduler")}
    assert old[task.public_id] == pytest.approx(fresh[task.public_id] * 0.25, rel=1e-2)
    assert old[decision.public_id] == pytest.approx(
        fresh[decision.public_id] * 0.5 ** (28 / 3650), rel=1e-3
    )
    assert ids(recall(actor=owner, query="billing cron scheduler"))[0] == decision.public_id


def test_kind_filter(tenancy, owner, team):
    remember_all(
        tenancy.owner,
        [
            ("Redis keys expire after one hour.", "fact"),
            ("Never call FLUSHALL on the shared Redis.", "gotcha"),
            ("We chose Redis for the job queue.", "decision"),
        ],
        scope=team,
    )
    assert {h.kind for h in recall(actor=owner, query="redis", kinds=["gotcha"])} == {"gotcha"}
    kinds = {h.kind for h in recall(actor=owner, query="redis", kinds=["fact", "decision"])}
    assert kinds == {"fact", "decision"}
    with pytest.raises(ValidationFailed) as refused:
        recall(actor=owner, query="redis", kinds=["rumour"])
    assert refused.value.field == "kinds"


def test_full_text_matches_any_term_ranked_by_how_many_match(tenancy, owner, team):
    two, one, none = remember_all(
        tenancy.owner,
        [
            ("The zebra fixture seeds the quantum test database.", "fact"),
            ("Quantum is the name of the staging cluster.", "fact"),
            ("Lunch is at noon.", "fact"),
        ],
        scope=team,
    )
    query = "zebra quantum kubernetes"  # no memory has all three words
    hits = recall(actor=owner, query=query, mode="fulltext")
    assert ids(hits) == [two.public_id, one.public_id]
    assert all(hit.fts_matched for hit in hits) and all(h.similarity is None for h in hits)
    # Memories matching only some terms take part even when one matches all of them.
    assert ids(recall(actor=owner, query="zebra quantum", mode="fulltext")) == [
        two.public_id,
        one.public_id,
    ]
    # Negated terms never count as a match in the fallback.
    assert ids(recall(actor=owner, query="kubernetes -quantum zebra", mode="fulltext")) == [
        two.public_id
    ]
    hybrid = recall(actor=owner, query=query, nearest=True)  # the noise too (no floor)
    assert [hit.id for hit in hybrid if hit.fts_matched] == [two.public_id, one.public_id]
    assert hybrid[-1].id == none.public_id  # the vector leg ranks everything; it comes last


def test_identifiers_and_error_codes_match_exactly(tenancy, owner, team):
    target, _ = remember_all(
        tenancy.owner,
        [
            ("ERR_CONN_RESET from parse_header() means the proxy cut the upload.", "gotcha"),
            ("Uploads larger than 10 MB go through the resumable endpoint.", "fact"),
        ],
        scope=team,
    )
    for query in ("ERR_CONN_RESET", "parse_header", "parse_header ERR_CONN_RESET proxy"):
        hits = recall(actor=owner, query=query)
        assert hits[0].id == target.public_id and hits[0].fts_matched, query


def test_foreign_scopes_never_show_and_never_change_a_result(tenancy, owner, team):
    query = "zebra quantum kubernetes"
    remember_all(
        tenancy.owner,
        [
            ("The zebra fixture seeds the quantum test database.", "fact"),
            ("Kubernetes runs the staging workers.", "fact"),
            ("Blue-green deploys switch the load balancer.", "decision"),
        ],
        scope=team,
    )
    before = [(h.id, h.score, h.fts_matched) for h in recall(actor=owner, query=query)]
    before_text = [(h.id, h.score) for h in recall(actor=owner, query=query, mode="fulltext")]
    # The outsider's own scope fills up with memories that match every term, and then some.
    foreign = make_scope(owner=tenancy.outsider, slug="elsewhere")
    remember_all(
        tenancy.outsider,
        [
            (f"zebra quantum kubernetes note {i}: kubernetes zebra quantum", "fact")
            for i in range(60)
        ],
        scope=foreign.public_id,
    )
    after = [(h.id, h.score, h.fts_matched) for h in recall(actor=owner, query=query)]
    assert after == before
    assert [(h.id, h.score) for h in recall(actor=owner, query=query, mode="fulltext")] == (
        before_text
    )
    outsider_view = recall(actor=Actor(user=tenancy.outsider), query=query, k=50)
    assert len(outsider_view) == 50 and {h.scope for h in outsider_view} == {foreign.public_id}
    with pytest.raises(NotFound) as refused:
        recall(actor=Actor(user=tenancy.outsider), query=query, scopes=[team])
    assert "scopes" in refused.value.details


def test_requested_scopes_narrow_the_search(tenancy, owner, team):
    [in_team] = remember_all(
        tenancy.owner, [("Team: tabs in Makefiles.", "convention")], scope=team
    )
    [personal] = remember_all(tenancy.owner, [("Personal: tabs in Makefiles.", "preference")])
    everywhere = set(ids(recall(actor=owner, query="tabs in Makefiles")))
    assert everywhere == {in_team.public_id, personal.public_id}
    assert ids(recall(actor=owner, query="tabs in Makefiles", scopes=[team])) == [in_team.public_id]
    with pytest.raises(NotFound):
        recall(actor=owner, query="tabs", scopes=[team, "scp_doesnotexist"])


def test_forgotten_and_superseded_memories_are_not_recalled(tenancy, owner, team):
    old, new, gone = remember_all(
        tenancy.owner,
        [
            ("The API rate limit is 100 requests per minute.", "fact"),
            ("The API rate limit is 600 requests per minute.", "fact"),
            ("The API rate limit is unlimited for admins.", "fact"),
        ],
        scope=team,
    )
    lifecycle.memory_supersede(actor=owner, memory=old, by=new)
    lifecycle.memory_forget(actor=owner, memory=gone, reason="wrong")
    assert ids(recall(actor=owner, query="API rate limit")) == [new.public_id]
    lifecycle.memory_restore(actor=owner, memory=Memory.objects.get(pk=gone.pk))
    assert set(ids(recall(actor=owner, query="API rate limit"))) == {
        new.public_id,
        gone.public_id,
    }


FILLER = (
    "The frontend build uses Vite with a custom plugin for SVG sprites, and the design tokens are "
    "generated from the Figma export during the prebuild step; lint runs with eslint and the "
    "stylelint config shared across packages. "
)


def test_the_tail_of_a_long_memory_is_found_through_its_window(tenancy, owner, team):
    tail = "Finally: the on-call phone rotates every Monday at nine, handed over in person."
    long_text = FILLER * 12 + tail
    [long_memory] = remember_all(tenancy.owner, [(long_text, "fact")], scope=team)
    assert long_memory.windows.count() >= 2
    remember_all(
        tenancy.owner,
        [(f"Frontend note {i}: " + FILLER, "fact") for i in range(5)]
        + [("The coffee machine is descaled monthly.", "fact")],
        scope=team,
    )
    query = "who carries the pager each week and when is the handoff"
    hits = recall(actor=owner, query=query, mode="vector", k=3)
    assert hits[0].id == long_memory.public_id
    whole = float(np.dot(embed_query(query), np.array(long_memory.embedding)))
    assert hits[0].similarity > whole + 0.1  # the window matched, not the whole text


def test_recall_counts_go_up_for_returned_memories_only(tenancy, owner, team):
    hit, miss = remember_all(
        tenancy.owner,
        [("Feature flags live in config/flags.yaml.", "fact"), ("Lunch is at noon.", "fact")],
        scope=team,
    )
    recall(actor=owner, query="config/flags.yaml", k=1)
    recall(actor=owner, query="config/flags.yaml", k=1)
    # Counted by the scheduled fold, not on the read path.
    assert set(Memory.objects.values_list("recall_count", flat=True)) == {0}
    assert tasks.fold_recall_counts() == 2
    counts = dict(Memory.objects.values_list("public_id", "recall_count"))
    assert counts == {hit.public_id: 2, miss.public_id: 0}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": " \n\t "}, "query"),
        ({"query": "a\x00b"}, "query"),
        ({"query": "x" * (search.MAX_QUERY_CHARS + 1)}, "query"),
        ({"query": "ok", "k": 0}, "k"),
        ({"query": "ok", "k": 51}, "k"),
        ({"query": "ok", "k": True}, "k"),
        ({"query": "ok", "scopes": "scp_x"}, "scopes"),
    ],
)
def test_bad_input_names_the_field(owner, kwargs, field):
    with pytest.raises(ValidationFailed) as refused:
        recall(actor=owner, **kwargs)
    assert refused.value.field == field
