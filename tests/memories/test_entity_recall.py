"""Recall's entity steps, through REST and the services: the entity lift (a query naming an
entity by an alias finds the memory about it, relevant on the entity match alone), the bounded
expansion through shared entities and live links, what the activity row's steps record, and
that neither reaches past the readable scopes."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.entities.links import link_create, link_remove
from memories.entities.services import entity_merge
from memories.models import ActivityLog, Entity
from memories.recall.inputs import ScopeSelection
from memories.recall.recall import search_found
from memories.recall.statement import PRODUCT
from memories.services.lifecycle import memory_forget
from memories.services.remember import RememberInput, memory_remember_many
from scopes.models import Scope
from tests.factories import make_scope
from tests.memories.recall_support import remember_all
from zeromemory.core.actor import Actor

# Memories of a zoo, far from anything the tests ask about: they fill the scope so that the
# neighbour of a strong hit is not among the statement's candidates by chance.
ANIMALS = ["otter", "lynx", "heron", "tapir", "gecko", "okapi", "bison", "ibex", "marmot", "puffin"]
ZOO = [
    (f"The {animal} enclosure at the zoo was repainted {when}.", "fact")
    for animal in ANIMALS
    for when in ("green last spring", "after the storm in March")
]

# A strong hit and the memory a link joins to it, which the query alone does not find.
INVOICE_EXPORT = [
    ("The nightly invoice export job writes CSV files at 02:00 UTC.", "fact"),
    ("Accounting reads them with a read-only role.", "fact"),
]
INVOICE_QUERY = "when does the nightly invoice export job run"


def post_recall(client, body):
    return client.post("/api/v1/recall", body, format="json")


def last_steps(user):
    return ActivityLog.objects.filter(user=user, operation="recall").latest("id").steps


def selection_of(*scopes: Scope) -> ScopeSelection:
    return ScopeSelection(ids=tuple(scope.pk for scope in scopes), requested=[])


@pytest.fixture
def zoo(tenancy, team):
    return remember_all(tenancy.owner, ZOO, scope=team)


def test_a_query_naming_an_entity_by_its_alias_finds_the_memory_about_it(tenancy, api, team, zoo):
    client = api(tenancy.owner)
    written = client.post(
        "/api/v1/memories",
        {
            "content": "Rotate its signing keys every 90 days.",
            "kind": "convention",
            "scope": team,
            "entities": [{"name": "Quetzal", "kind": "service", "aliases": ["payments gateway"]}],
        },
        format="json",
    )
    assert written.status_code == 201, written.json()
    keys = written.json()["id"]
    query = "What about the payments gateway?"

    body = post_recall(client, {"query": query, "scopes": [team]}).json()
    assert body["query"] == query and body["nothing_relevant"] is False
    assert body["results"][0]["id"] == keys and body["results"][0]["relevant"] is True
    assert last_steps(tenancy.owner)["entities"] == {"lifted": [keys]}

    # Without the entity step the same query finds nothing relevant: the match is what counts.
    selection = selection_of(tenancy.team)
    without = search_found(
        query=query, selection=selection, tuning=replace(PRODUCT, entity_lift=False)
    )
    assert keys not in [hit.id for hit in without.hits]

    # Another scope of the owner's does not know the name: nothing there is relevant.
    other = make_scope(owner=tenancy.owner, slug="other")
    remember_all(tenancy.owner, ZOO[:4], scope=other.public_id)
    elsewhere = post_recall(client, {"query": query, "scopes": [other.public_id]}).json()
    assert elsewhere["results"] == [] and elsewhere["nothing_relevant"] is True
    # The outsider cannot search the team's scope at all.
    assert post_recall(api(tenancy.outsider), {"query": query, "scopes": [team]}).status_code == 404


def test_the_expansion_adds_the_linked_memory_of_a_strong_hit(tenancy, api, team, zoo):
    export, finance = remember_all(
        tenancy.owner,
        INVOICE_EXPORT,
        scope=team,
    )
    actor = Actor(user=tenancy.owner)
    query = INVOICE_QUERY
    selection = selection_of(tenancy.team)
    before = search_found(query=query, selection=selection, k=2)
    assert before.hits[0].id == export.public_id
    assert finance.public_id not in [hit.id for hit in before.hits]

    link = link_create(actor=actor, source=export, target=finance, link_type="relates_to").link
    body = post_recall(api(tenancy.owner), {"query": query, "scopes": [team], "k": 2}).json()
    assert [hit["id"] for hit in body["results"]] == [export.public_id, finance.public_id]
    assert last_steps(tenancy.owner)["expansion"] == {"added": [finance.public_id]}
    # Switched off (the bench's ablation), the answer is the one before; the expansion costs
    # one statement, the entity lift none (it runs inside recall's statement).
    with CaptureQueriesContext(connection) as without_steps:
        off = search_found(
            query=query,
            selection=selection,
            k=2,
            tuning=replace(PRODUCT, expansion=False, entity_lift=False),
        )
    with CaptureQueriesContext(connection) as with_steps:
        search_found(query=query, selection=selection, k=2)
    assert [hit.id for hit in off.hits] == [hit.id for hit in before.hits]
    assert len(with_steps) == len(without_steps) + 1

    # A removed link is followed no more; nothing relevant expands nothing.
    link_remove(actor=actor, link=link)
    after = search_found(query=query, selection=selection, k=2)
    assert finance.public_id not in [hit.id for hit in after.hits]
    assert search_found(query="zqxv kwyjibo flurble", selection=selection).hits == []


def expansions(captured: CaptureQueriesContext) -> int:
    """How many of the captured statements were the expansion's (its input names the strong
    hits)."""
    return sum("AS strong," in query["sql"] for query in captured.captured_queries)


def test_the_expansion_runs_only_where_it_could_change_the_answer(tenancy, team, zoo):
    export, finance = remember_all(
        tenancy.owner,
        INVOICE_EXPORT,
        scope=team,
    )
    link_create(
        actor=Actor(user=tenancy.owner), source=export, target=finance, link_type="relates_to"
    )
    query = INVOICE_QUERY
    selection = selection_of(tenancy.team)
    off = replace(PRODUCT, expansion=False)
    # k=1: the one answer is the strong hit itself, which a neighbour it brings (at a share of
    # its score) never passes. The statement is not run, and the answer is the one without it.
    with CaptureQueriesContext(connection) as settled:
        one = search_found(query=query, selection=selection, k=1)
    assert [hit.id for hit in one.hits] == [export.public_id]
    assert [hit.id for hit in one.hits] == [
        hit.id for hit in search_found(query=query, selection=selection, k=1, tuning=off).hits
    ]
    assert expansions(settled) == 0
    assert one.steps().get("expansion") is None
    # k=2: the second place is open to the linked memory: the statement runs and adds it.
    with CaptureQueriesContext(connection) as open_place:
        two = search_found(query=query, selection=selection, k=2)
    assert [hit.id for hit in two.hits] == [export.public_id, finance.public_id]
    assert expansions(open_place) == 1


def test_the_expansion_follows_a_rare_entity_of_a_strong_hit(tenancy, team, zoo):
    # Written first and named by its writer, so that the scope knows the name when the others
    # open a sentence with it.
    [written] = memory_remember_many(
        actor=Actor(user=tenancy.owner),
        requests=[
            RememberInput(
                content="Deploys of Albatross need a freeze window on Fridays.",
                kind="convention",
                scope=team,
                entities=["Albatross"],
            )
        ],
    )
    deploy = written.result.memory
    holidays, gone, *_ = remember_all(
        tenancy.owner,
        [
            ("Albatross releases are paused during the holidays.", "fact"),
            ("Albatross releases were paused during the migration.", "fact"),
            ("Freeze windows for the mobile app are set by the release manager.", "fact"),
            ("Deploys of the website happen twice a day.", "fact"),
        ],
        scope=team,
    )
    memory_forget(actor=Actor(user=tenancy.owner), memory=gone, reason="it was a one-off")
    query = "do deploys need a freeze window"
    selection = selection_of(tenancy.team)
    off = search_found(query=query, selection=selection, tuning=replace(PRODUCT, expansion=False))
    assert off.hits[0].id == deploy.public_id
    assert holidays.public_id not in [hit.id for hit in off.hits]

    found = search_found(query=query, selection=selection)
    ids = [hit.id for hit in found.hits]
    # The memory about the same (rare) entity comes with the strong hit, below the clearly
    # better ones; the forgotten one never does.
    assert ids[0] == deploy.public_id and holidays.public_id in ids
    assert gone.public_id not in ids
    assert found.steps()["expansion"] == {"added": [holidays.public_id]}


def test_build_context_groups_the_relevant_rows_by_the_entities_the_topic_names(
    tenancy, api, team, zoo
):
    client = api(tenancy.owner)
    about = {
        "Quetzal": [
            "Quetzal retries a declined card twice before it gives up.",
            "Quetzal keeps its signing keys in the vault under payments/.",
        ],
        "Tamarin": ["Tamarin sends the receipt emails once a card payment is confirmed."],
    }
    written = {}
    for name, texts in about.items():
        for text in texts:
            answer = client.post(
                "/api/v1/memories",
                {
                    "content": text,
                    "kind": "fact",
                    "scope": team,
                    "entities": [{"name": name, "kind": "service"}],
                },
                format="json",
            )
            assert answer.status_code == 201, answer.json()
            written[text] = answer.json()["id"]
    topic = "How do Quetzal and Tamarin handle a card payment?"
    body = client.post("/api/v1/context", {"topic": topic, "scopes": [team]}, format="json").json()
    relevant = next(s for s in body["sections"] if s["name"] == "relevant")
    groups = {row["id"]: row["group"] for row in relevant["rows"]}
    for text in about["Quetzal"]:
        assert groups[written[text]] == "Quetzal"
    assert groups[written[about["Tamarin"][0]]] == "Tamarin"
    # The rows of a group are together, under its heading, in the markdown and the JSON alike.
    order = [row["group"] for row in relevant["rows"] if row["group"]]
    assert order == sorted(order, key=order.index)  # contiguous runs
    markdown = body["markdown"]
    assert "### Quetzal" in markdown and "### Tamarin" in markdown
    for group in ("Quetzal", "Tamarin"):
        heading = markdown.index(f"### {group}")
        for row_id, row_group in groups.items():
            if row_group == group:
                assert markdown.index(row_id) > heading
    # The headings are within the budget: the answer's tokens still add up to the markdown's.
    assert body["tokens"] <= body["max_tokens"]
    # A topic naming no entity groups nothing.
    plain = client.post(
        "/api/v1/context", {"topic": "card payment retries", "scopes": [team]}, format="json"
    ).json()
    assert "###" not in plain["markdown"]
    assert all(row["group"] is None for s in plain["sections"] for row in s["rows"])


def test_the_lift_follows_a_chain_of_merges_both_ways(tenancy, api, team, zoo):
    actor = Actor(user=tenancy.owner)
    written = memory_remember_many(
        actor=actor,
        requests=[
            RememberInput(content=content, kind="fact", scope=team, entities=[name])
            for content, name in [
                ("Rotate its signing keys every 90 days.", "Kestrel"),
                ("Retries back off for thirty seconds.", "Quetzal"),
                ("Its dashboards live in the ops folder.", "Osprey"),
            ]
        ],
    )
    oldest, _middle, newest = (item.result.memory.public_id for item in written)
    named = {entity.name: entity for entity in Entity.objects.filter(scope=tenancy.team)}
    # Kestrel folded into Quetzal, then Quetzal into Osprey: two hops from the oldest name.
    entity_merge(actor=actor, merged=named["Kestrel"], survivor=named["Quetzal"])
    entity_merge(actor=actor, merged=named["Quetzal"], survivor=named["Osprey"])
    client = api(tenancy.owner)

    by_oldest = post_recall(client, {"query": "What about Kestrel?", "scopes": [team]}).json()
    found = {hit["id"]: hit["relevant"] for hit in by_oldest["results"]}
    assert found.get(newest) is True, by_oldest  # the survivor's memory, two hops up
    by_survivor = post_recall(client, {"query": "What about Osprey?", "scopes": [team]}).json()
    found = {hit["id"]: hit["relevant"] for hit in by_survivor["results"]}
    assert found.get(oldest) is True, by_survivor  # a memory of a name folded two hops down


def test_a_relevant_memory_ranked_below_noise_still_answers(tenancy, api, team, zoo):
    [written] = memory_remember_many(
        actor=Actor(user=tenancy.owner),
        requests=[
            RememberInput(
                content="Rotate its signing keys every 90 days.",
                kind="fact",
                scope=team,
                entities=["Kestrel"],
            )
        ],
    )
    keys = written.result.memory.public_id
    client = api(tenancy.owner)
    query = {"query": "What about Kestrel?", "scopes": [team], "k": 3}
    # Nearest first, the zoo's memories rank above it: none of them is relevant.
    nearest = post_recall(client, {**query, "nearest": True}).json()
    assert keys not in [hit["id"] for hit in nearest["results"]]
    assert not any(hit["relevant"] for hit in nearest["results"])
    # The floor's answer is the k best of the relevant ones, not the relevant among the k best.
    body = post_recall(client, query).json()
    assert [hit["id"] for hit in body["results"]] == [keys]
    assert body["nothing_relevant"] is False
