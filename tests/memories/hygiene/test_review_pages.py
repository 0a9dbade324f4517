"""The Review page and the admin's review queue, server side (the browser tests drive both)."""

from __future__ import annotations

from django.test import Client


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_page_shows_the_pair_to_the_admin_only(open_pair, tenancy):
    body = signed_in(tenancy.owner).get("/review/").content.decode()
    assert open_pair.memory_a.content in body and open_pair.memory_b.content in body
    assert "Both say the staging database" in body and 'value="merge"' in body
    writer = signed_in(tenancy.writer).get("/review/").content.decode()
    assert open_pair.memory_a.content not in writer
    assert (
        signed_in(tenancy.writer).get(f"/review/?scope={tenancy.team.public_id}").status_code == 403
    )
    assert (
        signed_in(tenancy.outsider).get(f"/review/?scope={tenancy.team.public_id}").status_code
        == 404
    )


def test_resolving_over_htmx_swaps_the_card(open_pair, tenancy):
    client = signed_in(tenancy.owner)
    url = f"/review/{open_pair.public_id}/resolve/"
    response = client.post(url, {"action": "b_supersedes_a"}, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and f'id="{open_pair.public_id}"' in body
    assert 'value="undo"' in body and "Conflict resolved." in body
    open_pair.memory_a.refresh_from_db()
    assert open_pair.memory_a.superseded_by_id == open_pair.memory_b_id
    again = client.post(url, {"action": "merge"})
    assert again.status_code == 302  # not open: told so, nothing changes
    client.post(url, {"action": "undo"})
    open_pair.memory_a.refresh_from_db()
    assert open_pair.memory_a.valid
    assert signed_in(tenancy.writer).post(url, {"action": "undo"}).status_code == 403


def test_the_admin_shows_the_pair_and_resolves_it(open_pair, tenancy, django_user_model):
    staff = django_user_model.objects.create_superuser("staff", "staff@example.com", "pw-staff-123")
    client = signed_in(staff)
    page = client.get(f"/admin/memories/conflict/{open_pair.pk}/change/").content.decode()
    assert open_pair.memory_a.content in page and open_pair.memory_b.content in page
    assert "rank 2" in page
    listing = client.get("/admin/memories/conflict/?verdict=duplicate&status=open")
    assert open_pair.public_id in listing.content.decode()
    client.post(
        f"/admin/memories/conflict/{open_pair.pk}/change/",
        {"action": "forget_b", "actions-TOTAL_FORMS": "0", "actions-INITIAL_FORMS": "0"},
    )
    open_pair.refresh_from_db()
    assert open_pair.status == "resolved" and open_pair.resolved_by == staff
    client.post(
        f"/admin/memories/conflict/{open_pair.pk}/change/",
        {"action": "undo", "actions-TOTAL_FORMS": "0", "actions-INITIAL_FORMS": "0"},
    )
    client.post(
        "/admin/memories/conflict/",
        {"action": "keep_both", "_selected_action": [open_pair.pk]},
    )
    open_pair.refresh_from_db()
    assert (open_pair.status, open_pair.resolution) == ("resolved", "keep_both")


def test_a_card_shows_the_memorys_verbatim_phrase_as_the_memory_list_does(tenancy, kinds_seeded):
    from memories.models import Conflict, ConflictStatus, Relation
    from memories.services.remember import RememberInput, memory_remember
    from zeromemory.core.actor import Actor

    memory = memory_remember(
        actor=Actor(user=tenancy.owner, surface="dashboard"),
        request=RememberInput(
            content="The team prefers boring technology.",
            kind="preference",
            scope=tenancy.team.public_id,
            verbatim="Langweilige Technik ist gute Technik.",
        ),
    ).memory
    Conflict.objects.create(
        scope=tenancy.team,
        memory_a=memory,
        status=ConflictStatus.OPEN,
        verdict=Relation.CHALLENGE,
        rationale="Not any more.",
        challenged_by=tenancy.writer,
    )
    body = signed_in(tenancy.owner).get("/review/").content.decode()
    assert "Langweilige Technik ist gute Technik." in body
