"""The entity pages: search, one entity (its memories, names, a neighbourhood picture readable
without JavaScript, a timeline), chips on memory cards, merges and splits for admins with undo;
an entity of a scope one cannot read is never named, not even in a picture."""

from __future__ import annotations

import re

import pytest

from memories.models import Entity, EntityMention, EntityMerge, EntitySplit, SourceKind
from memories.services.remember import RememberInput, memory_remember
from tests.factories import make_scope
from zeromemory.core.actor import Actor


def remember(user, content, scope, entities):
    return memory_remember(
        actor=Actor(user=user, surface="dashboard"),
        request=RememberInput(
            content=content,
            kind="fact",
            scope=scope.public_id,
            entities=entities,
            source_kind=SourceKind.DASHBOARD,
        ),
    ).memory


@pytest.fixture
def billing(tenancy):
    team = tenancy.team
    remember(
        tenancy.owner, "The billing service retries charges.", team, ["billing service", "Stripe"]
    )
    remember(tenancy.owner, "The billing service pages Dana.", team, ["billing service", "Dana"])
    remember(tenancy.owner, "Dana and Stripe met about refunds.", team, ["Dana", "Stripe"])
    return Entity.objects.get(name="billing service")


def test_the_entity_page_shows_memories_names_neighbours_and_timeline(tenancy, billing, login):
    page = login(tenancy.reader).get(f"/entities/{billing.public_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "The billing service pages Dana." in html
    assert "<svg" in html and 'role="img"' in html
    # Each neighbour is a node that links to its page, with a line as thick as what they share.
    for name in ("Stripe", "Dana"):
        entity = Entity.objects.get(name=name)
        assert f'href="/entities/{entity.public_id}/"' in html
    assert len(re.findall(r"<line ", html)) == 2
    assert "<meter" in html  # the timeline
    # A reader may neither add names nor merge.
    assert "/aliases/" not in html and "/merge/" not in html
    owner = login(tenancy.owner).get(f"/entities/{billing.public_id}/").content.decode()
    assert f"/entities/{billing.public_id}/merge/" in owner
    assert f"/scopes/{tenancy.team.public_id}/entities/changes/" in owner


def test_memory_cards_and_the_memory_page_carry_entity_chips(tenancy, billing, login):
    client = login(tenancy.owner)
    home = client.get("/", {"scope": tenancy.team.public_id}).content.decode()
    assert f'href="/entities/{billing.public_id}/"' in home and "chip" in home
    memory = billing.mentions.first().memory
    detail = client.get(f"/memories/{memory.public_id}/").content.decode()
    assert f'href="/entities/{billing.public_id}/"' in detail


def test_the_search_page_finds_entities(tenancy, billing, login):
    page = login(tenancy.reader).get("/entities/", {"q": "billing"})
    assert page.status_code == 200
    assert f"/entities/{billing.public_id}/" in page.content.decode()
    assert login(tenancy.reader).get("/entities/", {"kind": "planet"}).status_code == 400
    outsider = login(tenancy.outsider).get("/entities/", {"q": "billing"}).content.decode()
    assert billing.public_id not in outsider
    assert login(tenancy.outsider).get(f"/entities/{billing.public_id}/").status_code == 404


def test_a_hidden_scope_entity_is_never_drawn(tenancy, billing, login):
    hidden = make_scope(owner=tenancy.owner, slug="hidden")
    remember(
        tenancy.owner,
        "The billing service moves to Nightjar.",
        hidden,
        ["billing service", "Nightjar"],
    )
    # The hidden scope's billing service is another entity; the team's page does not know it.
    page = login(tenancy.reader).get(f"/entities/{billing.public_id}/").content.decode()
    assert "Nightjar" not in page
    search = login(tenancy.reader).get("/entities/", {"q": "nightjar"}).content.decode()
    assert "Nightjar" not in search
    # A mention across scopes (as a move might leave one): no chip, no node for the reader.
    memory = billing.mentions.first().memory
    nightjar = Entity.objects.get(name="Nightjar")
    EntityMention.objects.create(memory=memory, entity=nightjar, source="agent")
    for url in ("/", f"/memories/{memory.public_id}/", f"/entities/{billing.public_id}/"):
        page = login(tenancy.reader).get(url).content.decode()
        assert "Nightjar" not in page and nightjar.public_id not in page, url
    assert "Nightjar" in login(tenancy.owner).get(f"/memories/{memory.public_id}/").content.decode()


def test_admins_merge_split_and_undo_from_the_changes_page(tenancy, billing, login):
    owner, writer = login(tenancy.owner), login(tenancy.writer)
    stripe = Entity.objects.get(name="Stripe")
    refused = writer.post(f"/entities/{stripe.public_id}/merge/", {"into": billing.public_id})
    assert refused.status_code == 403
    assert (
        writer.post(f"/entities/{billing.public_id}/aliases/", {"alias": "billing API"}).status_code
        == 302
    )
    merged = owner.post(f"/entities/{stripe.public_id}/merge/", {"into": billing.public_id})
    assert merged.status_code == 302 and merged["Location"] == f"/entities/{billing.public_id}/"
    bad = owner.post(f"/entities/{billing.public_id}/merge/", {"into": "ent_nope"})
    assert bad.status_code == 422
    split = owner.post(
        f"/entities/{billing.public_id}/split/",
        {"aliases": "billing API", "name": "billing API", "kind": ""},
    )
    assert split.status_code == 302, split.content.decode()[:2000]
    changes_url = f"/scopes/{tenancy.team.public_id}/entities/changes/"
    assert writer.get(changes_url).status_code == 403
    assert login(tenancy.outsider).get(changes_url).status_code == 404
    changes = owner.get(changes_url).content.decode()
    assert "Stripe" in changes and "billing API" in changes
    created = EntitySplit.objects.get().created
    assert owner.post(f"/entities/{stripe.public_id}/merge/undo/").status_code == 302
    assert owner.post(f"/entities/{created.public_id}/split/undo/").status_code == 302
    assert EntityMerge.objects.get().undone_at and EntitySplit.objects.get().undone_at
    again = owner.post(f"/entities/{stripe.public_id}/merge/undo/", follow=True)
    assert "not merged" in again.content.decode()
