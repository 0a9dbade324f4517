"""The entities' surfaces: REST search and description, aliases, merges and splits with their
undoing (with the roles they need), and the rule that an entity of a scope one cannot read is
never named, not even as a neighbour."""

from __future__ import annotations

import pytest

from memories.models import Entity, EntityMention, EntityMerge, Memory
from tests.factories import make_scope


def remember(client, content, scope, **extra):
    response = client.post(
        "/api/v1/memories",
        {"content": content, "kind": "fact", "scope": scope, **extra},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def entity_named(name: str) -> Entity:
    return Entity.objects.get(name=name)


@pytest.fixture
def billing(tenancy, owner, team):
    first = remember(
        owner,
        "The billing service retries failed charges.",
        team,
        entities=["billing service", "Stripe"],
    )
    second = remember(
        owner, "The billing service pages Dana on call.", team, entities=["billing service", "Dana"]
    )
    return {"first": first, "second": second, "entity": entity_named("billing service")}


def test_search_finds_entities_by_name_alias_and_kind(tenancy, owner, team, billing, api):
    found = owner.get("/api/v1/entities", {"q": "BILLING", "scope": team}).json()
    assert [row["name"] for row in found["results"]] == ["billing service"]
    assert found["results"][0]["memories"] == 2
    owner.post(
        f"/api/v1/entities/{billing['entity'].public_id}/aliases",
        {"alias": "billing-svc"},
        format="json",
    )
    by_alias = owner.get("/api/v1/entities", {"q": "svc"}).json()["results"]
    assert [row["id"] for row in by_alias] == [billing["entity"].public_id]
    assert "billing-svc" in by_alias[0]["aliases"]
    kinds = owner.get("/api/v1/entities", {"kind": "person"}).json()["results"]
    assert all(row["kind"] == "person" for row in kinds)
    bad = owner.get("/api/v1/entities", {"kind": "planet"})
    assert bad.status_code == 400 and "kind" in bad.json()["error"]["details"]
    assert api(tenancy.outsider).get("/api/v1/entities", {"scope": team}).status_code == 404
    assert api(tenancy.outsider).get("/api/v1/entities", {"q": "billing"}).json()["results"] == []


def test_an_entity_is_described_with_memories_neighbours_and_timeline(
    tenancy, owner, team, billing, api
):
    answer = owner.get(f"/api/v1/entities/{billing['entity'].public_id}", {"limit": 1}).json()
    assert answer["entity"]["name"] == "billing service"
    assert answer["entity"]["memories"] == 2
    assert [m["id"] for m in answer["memories"]] == [billing["second"]]  # newest first
    rest = owner.get(
        f"/api/v1/entities/{billing['entity'].public_id}", {"cursor": answer["next_cursor"]}
    ).json()
    assert [m["id"] for m in rest["memories"]] == [billing["first"]]
    neighbours = {n["name"]: n["shared_memories"] for n in answer["neighbours"]}
    assert neighbours["Stripe"] == 1 and neighbours["Dana"] == 1
    assert sum(day["memories"] for day in answer["timeline"]) == 2
    reader = api(tenancy.reader).get(f"/api/v1/entities/{billing['entity'].public_id}")
    assert reader.status_code == 200
    outsider = api(tenancy.outsider).get(f"/api/v1/entities/{billing['entity'].public_id}")
    assert outsider.status_code == 404


def test_an_unreadable_entity_is_never_named_not_even_as_a_neighbour(tenancy, owner, team, api):
    # The owner's memory in a scope the reader cannot read names "Project Nightjar" beside the
    # billing service; the billing service of the team is the one entity they share a memory of
    # only through that hidden scope.
    hidden = make_scope(owner=tenancy.owner, slug="hidden").public_id
    remember(
        owner,
        "The billing service is replaced by Project Nightjar.",
        hidden,
        entities=["billing service", "Project Nightjar"],
    )
    remember(
        owner, "The billing service retries failed charges.", team, entities=["billing service"]
    )
    team_entity = Entity.objects.get(scope__public_id=team, name="billing service")
    hidden_entity = Entity.objects.get(name="Project Nightjar")
    reader = api(tenancy.reader)
    for response in (
        reader.get(f"/api/v1/entities/{team_entity.public_id}"),
        reader.get("/api/v1/entities", {"q": "nightjar"}),
        reader.get("/api/v1/entities"),
    ):
        assert response.status_code == 200
        assert "Nightjar" not in response.content.decode()
        assert hidden_entity.public_id not in response.content.decode()
    assert reader.get(f"/api/v1/entities/{hidden_entity.public_id}").status_code == 404
    # The owner reads both scopes and sees it, in its own scope.
    mine = owner.get(f"/api/v1/entities/{hidden_entity.public_id}").json()
    assert [n["name"] for n in mine["neighbours"]] == ["billing service"]


def test_merge_and_split_are_for_admins_and_undoable(tenancy, owner, team, billing, api):
    entity = billing["entity"]
    stripe = entity_named("Stripe")
    writer, reader = api(tenancy.writer), api(tenancy.reader)
    alias = writer.post(
        f"/api/v1/entities/{entity.public_id}/aliases", {"alias": "billing API"}, format="json"
    )
    assert alias.status_code == 201
    refused = reader.post(
        f"/api/v1/entities/{entity.public_id}/aliases", {"alias": "bill"}, format="json"
    )
    assert refused.status_code == 403
    taken = owner.post(
        f"/api/v1/entities/{entity.public_id}/aliases", {"alias": "stripe"}, format="json"
    )
    assert taken.status_code == 409

    merge = {"into": entity.public_id}
    assert (
        writer.post(f"/api/v1/entities/{stripe.public_id}/merge", merge, format="json").status_code
        == 403
    )
    merged = owner.post(f"/api/v1/entities/{stripe.public_id}/merge", merge, format="json")
    assert merged.status_code == 201, merged.json()
    assert merged.json()["survivor"]["id"] == entity.public_id
    described = owner.get(f"/api/v1/entities/{entity.public_id}").json()
    assert "Stripe" in described["entity"]["aliases"]
    assert [f["name"] for f in described["folded"]] == ["Stripe"]
    assert "Stripe" not in [n["name"] for n in described["neighbours"]]
    searched = owner.get("/api/v1/entities", {"q": "stripe"}).json()["results"]
    assert [row["id"] for row in searched] == [entity.public_id]
    again = owner.post(f"/api/v1/entities/{stripe.public_id}/merge", merge, format="json")
    assert again.status_code == 409
    undone = owner.post(f"/api/v1/entities/{stripe.public_id}/merge/undo")
    assert undone.status_code == 200 and undone.json()["undone_at"]
    assert EntityMerge.objects.count() == 1  # add-only: the row stays
    assert owner.post(f"/api/v1/entities/{stripe.public_id}/merge/undo").status_code == 409

    split = owner.post(
        f"/api/v1/entities/{entity.public_id}/split",
        {"aliases": ["billing API"], "name": "billing API", "kind": "service"},
        format="json",
    )
    assert split.status_code == 201, split.json()
    created = split.json()["created"]["id"]
    assert split.json()["aliases"] == ["billing API"]
    assert reader.post(f"/api/v1/entities/{created}/split/undo").status_code == 403
    back = owner.post(f"/api/v1/entities/{created}/split/undo")
    assert back.status_code == 200 and back.json()["undone_by"] == "owner"
    assert owner.post(f"/api/v1/entities/{entity.public_id}/split/undo").status_code == 409
    bad = owner.post(f"/api/v1/entities/{entity.public_id}/split", {"aliases": []}, format="json")
    assert bad.status_code == 400
    outsider = api(tenancy.outsider).post(f"/api/v1/entities/{entity.public_id}/merge/undo")
    assert outsider.status_code == 404


def test_a_mention_across_scopes_never_names_the_unreadable_side(tenancy, owner, team, api):
    # However a mention came to cross scopes (a move that left one behind, an import), what the
    # reader cannot read stays unnamed: in the description, its neighbours, the chips, search.
    hidden = make_scope(owner=tenancy.owner, slug="hidden").public_id
    seen = remember(owner, "The billing service retries.", team, entities=["billing service"])
    unseen = remember(owner, "Nightjar replaces it.", hidden, entities=["Project Nightjar"])
    billing = Entity.objects.get(name="billing service")
    nightjar = Entity.objects.get(name="Project Nightjar")
    EntityMention.objects.create(memory_id=memory_pk(seen), entity=nightjar, source="agent")
    EntityMention.objects.create(memory_id=memory_pk(unseen), entity=billing, source="agent")
    reader = api(tenancy.reader)
    answer = reader.get(f"/api/v1/entities/{billing.public_id}")
    text = answer.content.decode()
    assert answer.json()["entity"]["memories"] == 1
    assert [m["id"] for m in answer.json()["memories"]] == [seen]
    assert "Nightjar" not in text and nightjar.public_id not in text and unseen not in text
    assert "Nightjar" not in reader.get("/api/v1/entities", {"q": "nightjar"}).content.decode()
    # The owner reads both scopes: each side names the other.
    mine = owner.get(f"/api/v1/entities/{billing.public_id}").json()
    assert [n["name"] for n in mine["neighbours"]] == ["Project Nightjar"]


def memory_pk(public_id: str) -> int:
    return Memory.objects.get(public_id=public_id).pk


def test_entities_scan_gives_earlier_memories_a_name_learned_later(
    tenancy, owner, team, billing, api
):
    from io import StringIO

    from django.core.management import CommandError, call_command

    earlier = remember(owner, "The payments API times out after 30 seconds.", team)
    entity = billing["entity"].public_id
    owner.post(f"/api/v1/entities/{entity}/aliases", {"alias": "payments API"}, format="json")
    described = owner.get(f"/api/v1/entities/{entity}").json()
    assert earlier not in [m["id"] for m in described["memories"]]  # the write knew no such name

    out = StringIO()
    call_command("entities_scan", scope=team, verbosity=0, stdout=out)
    # Two: this memory's, and the first billing memory's own words, which its write could not
    # match yet (the name became known with that write; the writer's mention was already there).
    assert "Recorded 2 new mentions." in out.getvalue()
    described = owner.get(f"/api/v1/entities/{entity}").json()
    assert earlier in [m["id"] for m in described["memories"]]
    # Again: nothing new, nothing doubled.
    out = StringIO()
    call_command("entities_scan", verbosity=0, stdout=out)
    assert "Recorded 0 new mentions." in out.getvalue()
    assert owner.get(f"/api/v1/entities/{entity}").json()["entity"]["memories"] == 3
    with pytest.raises(CommandError, match="No scope"):
        call_command("entities_scan", scope="scp_missing", verbosity=0)
