"""Entities on the write path: detected without an LLM, given by writers, resolved through
aliases and merges; merges and splits add-only and undoable; the read path's dictionary match."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.entities import selectors
from memories.entities.dictionary import entities_named
from memories.entities.services import (
    entity_alias_add,
    entity_merge,
    entity_merge_undo,
    entity_split,
    entity_split_undo,
)
from memories.models import (
    Entity,
    EntityAlias,
    EntityMention,
    EntityMerge,
    Memory,
    MentionSource,
)
from memories.services.remember import RememberInput, memory_remember, memory_remember_many
from tests.factories import make_scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, Forbidden, NotFound


def remember(client, content, **extra):
    return client.post(
        "/api/v1/memories", {"content": content, "kind": "fact", **extra}, format="json"
    )


def about(memory_id: str) -> dict[str, tuple[str, str]]:
    """name -> (kind, source) of the entities a memory mentions."""
    return {
        mention.entity.name: (mention.entity.kind, mention.source)
        for mention in EntityMention.objects.filter(memory__public_id=memory_id).select_related(
            "entity"
        )
    }


def test_a_write_finds_its_entities_without_being_told(tenancy, owner, team):
    response = remember(
        owner,
        "Ask @dana about PAY-412: the retry in billing/worker/retry.py broke "
        "https://status.example.com/billing after we moved to Stripe Connect.",
        scope=team,
    )
    assert response.status_code == 201, response.json()
    found = about(response.json()["id"])
    assert found["@dana"] == ("handle", "detected")
    assert found["PAY-412"] == ("ticket", "detected")
    assert found["billing/worker/retry.py"] == ("path", "detected")
    assert found["https://status.example.com/billing"] == ("url", "detected")
    assert found["Stripe Connect"] == ("name", "detected")


def test_given_entities_with_aliases_resolve_later_mentions_case_insensitively(
    tenancy, owner, team
):
    first = remember(
        owner,
        "The invoices are rendered by a separate worker.",
        scope=team,
        entities=[{"name": "billing service", "kind": "service", "aliases": ["billing-svc"]}],
    )
    assert first.status_code == 201, first.json()
    assert about(first.json()["id"]) == {"billing service": ("service", "agent")}
    later = remember(owner, "Billing-Svc pages the on-call team when a run fails.", scope=team)
    entity = Entity.objects.get(name="billing service")
    assert about(later.json()["id"])["billing service"] == ("service", "detected")
    assert set(entity.aliases.values_list("normalized", flat=True)) == {
        "billing service",
        "billing svc",
    }
    # Another scope's same name is another entity.
    other = make_scope(owner=tenancy.owner, slug="other")
    remember(owner, "Billing-Svc is the name of our cat.", scope=other.public_id)
    assert not Entity.objects.filter(scope=other, name="billing service").exists()


def test_a_plain_lower_case_word_does_not_match_a_capitalized_name(tenancy, owner, team):
    remember(owner, "The release notes are written by Will.", scope=team, entities=["Will"])
    later = remember(owner, "The cron job will retry three times.", scope=team)
    assert "Will" not in about(later.json()["id"])


def test_an_absorbed_write_adds_what_its_writer_named(tenancy, owner, team):
    text = "The nightly export runs at 02:00 UTC."
    first = remember(owner, text, scope=team)
    again = remember(owner, text, scope=team, entities=[{"name": "exporter", "kind": "service"}])
    assert again.json()["deduplicated"] is True
    assert about(first.json()["id"])["exporter"] == ("service", "agent")


def test_a_batch_looks_its_names_up_once(tenancy, team):
    actor = Actor(user=tenancy.owner)
    memory_remember(
        actor=actor,
        request=RememberInput(content="We run Kafka.", kind="fact", scope=team, entities=["Kafka"]),
    )

    def lookups(count: int) -> int:
        requests = [
            RememberInput(
                content=f"Kafka topic orders_{count}_{n} feeds the ledger in Frankfurt.",
                kind="fact",
                scope=team,
            )
            for n in range(count)
        ]
        with CaptureQueriesContext(connection) as queries:
            items = memory_remember_many(actor=actor, requests=requests)
        assert all(item.error is None for item in items)
        return sum("memories_entityalias" in query["sql"] for query in queries.captured_queries)

    assert lookups(1) == lookups(25)
    kafka = Entity.objects.get(scope__public_id=team, name="Kafka")
    assert kafka.mentions.values("memory").distinct().count() == 1 + 1 + 25


@pytest.mark.parametrize(
    "entities",
    [
        "billing",
        [1],
        [{"name": "x" * 201}],
        [{"name": "billing", "kind": "planet"}],
        [{"name": "billing", "colour": "red"}],
        [{"name": "billing", "aliases": "billing-svc"}],
        [{"name": "a\x00b"}],
        [{"name": "!"}],
        ["e"] * 21,
    ],
)
def test_bad_entities_are_refused_naming_the_field(tenancy, owner, team, entities):
    response = remember(owner, "A memory with bad entities.", scope=team, entities=entities)
    assert response.status_code == 400, response.json()
    assert "entities" in response.json()["error"]["details"]
    assert not Memory.objects.exists()


def test_a_secret_named_as_an_entity_is_refused(tenancy, owner, team):
    response = remember(
        owner,
        "The deploy key lives in the vault.",
        scope=team,
        entities=["ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"],
    )
    assert response.status_code == 400, response.json()
    assert "entities" in response.json()["error"]["details"]


def test_batch_items_take_entities(tenancy, owner, team):
    response = owner.post(
        "/api/v1/memories/batch",
        {
            "items": [
                {
                    "content": "Deploys go through Spinnaker.",
                    "kind": "fact",
                    "scope": team,
                    "entities": [{"name": "Spinnaker", "kind": "tool"}],
                },
                {"content": "A bad one.", "kind": "fact", "scope": team, "entities": [7]},
            ]
        },
        format="json",
    )
    assert response.status_code == 200, response.json()
    good, bad = response.json()["results"]
    assert good["status"] == 201 and about(good["memory"]["id"])["Spinnaker"][0] == "tool"
    assert bad["status"] == 400 and "entities" in bad["error"]["details"]


def _entity(scope_id: str, name: str) -> Entity:
    return Entity.objects.get(scope__public_id=scope_id, name=name)


def test_merge_resolves_names_to_the_survivor_until_undone(tenancy, owner, team):
    remember(
        owner,
        "Payments flow through the billing service.",
        scope=team,
        entities=[{"name": "billing service", "kind": "service"}],
    )
    remember(
        owner,
        "The billing API answers in JSON.",
        scope=team,
        entities=[{"name": "the billing API", "kind": "service"}],
    )
    actor = Actor(user=tenancy.owner)
    survivor, folded = _entity(team, "billing service"), _entity(team, "the billing API")
    merge = entity_merge(actor=actor, merged=folded, survivor=survivor)
    [named] = entities_named(scope_ids=[tenancy.team.id], text="is the billing API down?")
    assert named == survivor
    later = remember(owner, "The billing API has a new rate limit.", scope=team)
    mention = EntityMention.objects.get(memory__public_id=later.json()["id"], entity=folded)
    assert mention.entity_id == folded.id  # the mention keeps its name; reading resolves it
    entity_merge_undo(actor=actor, merge=merge)
    [named] = entities_named(scope_ids=[tenancy.team.id], text="is the billing API down?")
    assert named == folded
    merge.refresh_from_db()
    assert merge.undone_at is not None and EntityMerge.objects.count() == 1
    with pytest.raises(ConflictError):
        entity_merge_undo(actor=actor, merge=merge)


def test_split_moves_names_and_their_mentions_until_undone(tenancy, owner, team):
    first = remember(
        owner,
        "Mercury is our queue.",
        scope=team,
        entities=[{"name": "Mercury", "kind": "service", "aliases": ["mercury-q"]}],
    )
    second = remember(owner, "The mercury-q consumer lags on Mondays.", scope=team)
    actor = Actor(user=tenancy.owner)
    mercury = _entity(team, "Mercury")
    split = entity_split(actor=actor, entity=mercury, aliases=["mercury-q"], name="mercury queue")
    queue = split.created
    assert queue.name == "mercury queue"
    assert set(queue.aliases.values_list("normalized", flat=True)) == {"mercury q", "mercury queue"}
    assert EntityMention.objects.filter(
        memory__public_id=second.json()["id"], entity=queue
    ).exists()
    assert EntityMention.objects.filter(
        memory__public_id=first.json()["id"], entity=mercury
    ).exists()
    entity_split_undo(actor=actor, split=split)
    assert EntityAlias.objects.get(normalized="mercury q").entity_id == mercury.id
    assert EntityMention.objects.filter(
        memory__public_id=second.json()["id"], entity=mercury
    ).exists()


def test_alias_add_and_its_conflicts(tenancy, owner, team):
    remember(
        owner, "Atlas renders maps.", scope=team, entities=[{"name": "Atlas", "kind": "service"}]
    )
    remember(
        owner, "Hermes sends mail.", scope=team, entities=[{"name": "Hermes", "kind": "service"}]
    )
    actor = Actor(user=tenancy.owner)
    atlas = _entity(team, "Atlas")
    entity_alias_add(actor=actor, entity=atlas, alias="map renderer")
    [named] = entities_named(scope_ids=[tenancy.team.id], text="who owns the Map Renderer?")
    assert named == atlas
    with pytest.raises(ConflictError):
        entity_alias_add(actor=actor, entity=atlas, alias="HERMES")


def test_entities_of_a_scope_one_cannot_read_do_not_exist_for_them(tenancy, owner, team):
    remember(
        owner, "Atlas renders maps.", scope=team, entities=[{"name": "Atlas", "kind": "service"}]
    )
    atlas = _entity(team, "Atlas")
    with pytest.raises(NotFound):
        selectors.entity_for_read(actor=Actor(user=tenancy.outsider), public_id=atlas.public_id)
    assert selectors.entity_for_read(actor=Actor(user=tenancy.reader), public_id=atlas.public_id)
    with pytest.raises(Forbidden):
        selectors.entity_for_write(actor=Actor(user=tenancy.reader), public_id=atlas.public_id)
    with pytest.raises(Forbidden):
        selectors.entity_for_admin(actor=Actor(user=tenancy.writer), public_id=atlas.public_id)


def test_the_extractor_and_agents_sources_are_kept(tenancy, team):
    actor = Actor(user=tenancy.owner)
    result = memory_remember(
        actor=actor,
        request=RememberInput(
            content="Orders are sharded by region.",
            kind="fact",
            scope=team,
            entities=[{"name": "orders service", "kind": "service"}],
        ),
    )
    [mention] = EntityMention.objects.filter(memory=result.memory)
    assert mention.source == MentionSource.AGENT


def test_the_mcp_remember_tool_takes_entities(tenancy, team):
    from tests.factories import make_token
    from tests.mcp_inproc import call_tool, structured

    secret = make_token(tenancy.owner)
    result = call_tool(
        secret,
        "remember",
        {
            "content": "The ledger reconciles nightly.",
            "kind": "fact",
            "scope": team,
            "entities": [{"name": "ledger", "kind": "service", "aliases": ["gl"]}, "Finance"],
        },
    )
    answer = structured(result)
    assert not result.is_error, answer
    assert about(answer["id"]) == {
        "ledger": ("service", "agent"),
        "Finance": ("name", "agent"),
    }
    bad = call_tool(
        secret,
        "remember",
        {
            "content": "Another.",
            "kind": "fact",
            "scope": team,
            "entities": [{"name": "x", "kind": "planet"}],
        },
    )
    details = structured(bad)["error"]["details"]
    assert bad.is_error and {key.split(".")[0] for key in details} == {"entities"}
