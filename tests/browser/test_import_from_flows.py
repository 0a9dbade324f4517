"""A person brings mem0's memories into a scope from the dashboard in a real browser: a dry run
first, then the import, then the same file again (which writes nothing)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from memories.models import Memory
from tests.factories import UserFactory, make_scope

pytestmark = pytest.mark.django_db(transaction=True)

MEM0_FILE = {
    "results": [
        {
            "id": "5e1f3a52-0001",
            "memory": "Deploys of the billing service happen on Thursdays.",
            "hash": "a1",
            "metadata": {"source": "chat"},
            "created_at": "2025-03-04T10:00:00+00:00",
            "updated_at": "2025-03-04T10:00:00+00:00",
            "user_id": "ines",
        },
        {
            "id": "5e1f3a52-0002",
            "memory": "The search team keeps its config in infra/search/values.yaml.",
            "hash": "a2",
            "metadata": None,
            "created_at": "2025-03-05T10:00:00+00:00",
            "updated_at": "2025-03-05T10:00:00+00:00",
            "user_id": "ines",
            "agent_id": "assistant",
        },
        {
            "id": "5e1f3a52-0003",
            "memory": "Deploys of the billing service happen on Thursdays.",
            "hash": "a1",
            "metadata": {},
            "created_at": "2025-03-06T10:00:00+00:00",
            "updated_at": "2025-03-06T10:00:00+00:00",
            "user_id": "ines",
        },
    ]
}


def _submit(page, *, dry_run: bool) -> None:
    page.get_by_label("System").select_option("mem0")
    page.get_by_label("File", exact=True).set_input_files(
        {
            "name": "mem0.json",
            "mimeType": "application/json",
            "buffer": json.dumps(MEM0_FILE).encode(),
        }
    )
    page.get_by_label("Dry run").set_checked(dry_run)
    page.get_by_role("button", name="Import", exact=True).click()


def _count(page, label: str):
    return page.locator("#import-report tr", has=page.get_by_role("rowheader", name=label))


def test_import_a_mem0_file_from_the_dashboard_after_a_dry_run(session):
    owner = UserFactory(username="ines")
    team = make_scope(owner=owner, slug="platform")
    page = session.page(owner)
    page.goto(f"/scopes/{team.public_id}/")
    page.get_by_role("link", name="Import from another system").click()
    expect(page).to_have_url(f"{session.base_url}/scopes/{team.public_id}/import-from/")

    _submit(page, dry_run=True)
    report = page.locator("#import-report")
    expect(report).to_contain_text("Dry run: what the import would do")
    expect(_count(page, "Records")).to_contain_text("3")
    expect(_count(page, "Written")).to_contain_text("2")
    expect(_count(page, "Absorbed as duplicates")).to_contain_text("1")
    session.screenshot(page, "dry-run")
    assert not Memory.objects.filter(scope=team).exists()

    _submit(page, dry_run=False)
    expect(report.get_by_role("heading", name="Imported")).to_be_visible()
    expect(_count(page, "Written")).to_contain_text("2")
    expect(_count(page, "Absorbed as duplicates")).to_contain_text("1")
    expect(report).to_contain_text("5e1f3a52-0002")
    session.screenshot(page, "imported")
    assert sorted(Memory.objects.filter(scope=team).values_list("content", flat=True)) == [
        "Deploys of the billing service happen on Thursdays.",
        "The search team keeps its config in infra/search/values.yaml.",
    ]

    _submit(page, dry_run=False)
    expect(_count(page, "Already imported")).to_contain_text("3")
    expect(_count(page, "Written")).to_contain_text("0")
    assert Memory.objects.filter(scope=team).count() == 2
