"""Entities travel in an export (entities.json, each memory's mentions) and come back on import;
erasure takes them with the memories that named them."""

from __future__ import annotations

import json

from memories.entities.services import entity_merge
from memories.models import Entity, EntityAlias, EntityMention, EntityMerge, Memory
from tests.factories import make_scope
from tests.memories import archive_support as archives
from zeromemory.core.actor import Actor


def remember(client, content, scope, **extra):
    response = client.post(
        "/api/v1/memories",
        {"content": content, "kind": "fact", "scope": scope, **extra},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def export(client, scope_id: str) -> bytes:
    response = client.get(f"/api/v1/scopes/{scope_id}/export")
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def _world(tenancy, owner):
    team = tenancy.team.public_id
    remember(
        owner,
        "Payments go through the billing service.",
        team,
        entities=[{"name": "billing service", "kind": "service", "aliases": ["billing-svc"]}],
    )
    remember(
        owner,
        "The billing API answers in JSON.",
        team,
        entities=[{"name": "billing API", "kind": "service"}],
    )
    last = remember(owner, "Ask @dana before changing billing-svc.", team)
    entity_merge(
        actor=Actor(user=tenancy.owner),
        merged=Entity.objects.get(name="billing API"),
        survivor=Entity.objects.get(name="billing service"),
    )
    return team, last


def test_an_export_carries_entities_aliases_and_mentions(tenancy, owner):
    team, last = _world(tenancy, owner)
    files = archives.entries(export(owner, team))
    entities = {item["name"]: item for item in json.loads(files["entities.json"])}
    assert entities["billing service"]["aliases"] == ["billing-svc"]
    assert entities["billing service"]["kind"] == "service"
    assert entities["billing API"]["merged_into"] == "billing service"
    assert entities["@dana"]["kind"] == "handle"
    [path] = [name for name in files if name.endswith(f"{last}.md")]
    fields, _ = archives.fmt.split_memory_file(files[path])
    assert {(m["name"], m["source"]) for m in fields["entities"]} == {
        ("@dana", "detected"),
        ("billing service", "detected"),
    }


def test_an_import_brings_them_back_in_another_scope(tenancy, owner):
    team, _ = _world(tenancy, owner)
    data = export(owner, team)
    other = make_scope(owner=tenancy.owner, slug="other")
    response = archives.post(owner, other.public_id, data)
    assert response.status_code == 200, response.json()
    billing = Entity.objects.get(scope=other, name="billing service")
    assert billing.kind == "service"
    assert set(EntityAlias.objects.filter(entity=billing).values_list("alias", flat=True)) == {
        "billing service",
        "billing-svc",
    }
    folded = Entity.objects.get(scope=other, name="billing API")
    assert folded.merged_into_id == billing.id
    assert EntityMerge.objects.filter(scope=other, merged=folded, survivor=billing).exists()
    mentioned = EntityMention.objects.filter(memory__scope=other)
    assert {(m.entity.name, m.source) for m in mentioned} >= {
        ("billing service", "agent"),
        ("billing API", "agent"),
        ("@dana", "detected"),
    }
    # The same entities export again (their scope is the server's to assign).
    again = archives.comparable(export(owner, other.public_id))["entities.json"]
    assert again == archives.comparable(data)["entities.json"]


def test_scope_erasure_removes_its_entities(tenancy, owner):
    team, _ = _world(tenancy, owner)
    assert owner.delete(f"/api/v1/scopes/{team}").status_code == 204
    assert not Entity.objects.exists() and not EntityAlias.objects.exists()
    assert not EntityMention.objects.exists() and not EntityMerge.objects.exists()


def test_a_purge_takes_the_names_only_that_memory_said(tenancy, owner, admin_user):
    from memories.portability.erasure import memory_purge

    team = tenancy.team.public_id
    kept = remember(owner, "Deploys use Spinnaker.", team, entities=["Spinnaker"])
    purged = remember(owner, "Spinnaker pages Quentin Dufour at night.", team)
    assert Entity.objects.filter(name="Quentin Dufour").exists()
    memory_purge(memory=Memory.objects.get(public_id=purged), by=admin_user, reason="GDPR")
    assert not Entity.objects.filter(name="Quentin Dufour").exists()
    assert not EntityAlias.objects.filter(normalized="quentin dufour").exists()
    assert EntityMention.objects.filter(memory__public_id=kept, entity__name="Spinnaker").exists()
