"""A scope admin reviews and resolves a pair in the dashboard's Review page and in the Django
admin, in a real browser; a German reviewer sees the page in German."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from memories.models import Conflict, ConflictStatus, Relation
from tests.factories import UserFactory, make_scope
from tests.memories.hygiene.support import write

pytestmark = pytest.mark.django_db(transaction=True)


def open_pair(owner) -> Conflict:
    team = make_scope(owner=owner, slug="platform")
    a = write(owner, "The API timeout is 30 seconds.", team, kind="fact")
    b = write(owner, "The API timeout was raised to 45 seconds.", team, kind="fact")
    return Conflict.objects.create(
        scope=team,
        memory_a=a,
        memory_b=b,
        status=ConflictStatus.OPEN,
        verdict=Relation.B_SUPERSEDES_A,
        confidence=0.9,
        rationale="B raises the timeout that A states.",
    )


def test_a_scope_admin_resolves_a_pair_in_the_review_page_and_undoes_it(session):
    owner = UserFactory(username="rita")
    conflict = open_pair(owner)
    page = session.page(owner)
    page.goto("/")
    page.get_by_role("link", name="Review", exact=True).click()
    card = page.locator(f"#{conflict.public_id}")
    expect(card).to_contain_text("The API timeout is 30 seconds.")
    expect(card).to_contain_text("raised to 45 seconds")
    expect(card).to_contain_text("B raises the timeout")
    session.screenshot(page, "review")

    card.get_by_role("button", name="B supersedes A").click()
    expect(page.get_by_text("Conflict resolved.", exact=True)).to_be_visible()
    expect(card).to_contain_text("Resolved: B supersedes A")
    conflict.memory_a.refresh_from_db()
    assert conflict.memory_a.superseded_by_id == conflict.memory_b_id
    session.screenshot(page, "resolved")

    card.get_by_role("button", name="Undo").click()
    expect(page.get_by_text("Resolution undone.", exact=True)).to_be_visible()
    expect(card.get_by_role("button", name="Keep both")).to_be_visible()
    conflict.memory_a.refresh_from_db()
    assert conflict.memory_a.valid


def test_the_review_page_speaks_german(session):
    owner = UserFactory(username="greta")
    conflict = open_pair(owner)
    page = session.page(owner, lang="de")
    page.goto("/review/")
    expect(page.get_by_role("heading", name="Prüfung")).to_be_visible()
    card = page.locator(f"#{conflict.public_id}")
    card.get_by_role("button", name="Beide behalten").click()
    expect(page.get_by_text("Konflikt entschieden.", exact=True)).to_be_visible()
    conflict.refresh_from_db()
    assert conflict.resolution == "keep_both"


def test_staff_resolve_a_pair_in_the_admin(session, django_user_model):
    staff = django_user_model.objects.create_superuser("sam", "sam@example.com", "pw-sam-12345")
    conflict = open_pair(staff)
    page = session.page(staff)
    page.goto("/admin/memories/conflict/?status__exact=open")
    page.get_by_role("link", name=conflict.public_id).click()
    expect(page.locator("body")).to_contain_text("The API timeout is 30 seconds.")
    expect(page.locator("body")).to_contain_text("rank 2")
    session.screenshot(page, "admin")
    page.locator("#id_action").select_option("merge")
    page.get_by_role("button", name="Save", exact=True).click()
    conflict.refresh_from_db()
    assert (conflict.status, conflict.resolution) == ("resolved", "merge")
    assert conflict.resolved_by == staff
