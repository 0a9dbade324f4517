"""A person exports a scope and deletes their account in a real browser.

The export's task is left in django-q2's ORM queue while the page shows its progress, then run
from the queue as a worker would run it; the page's polling then offers the download.
"""

from __future__ import annotations

import re
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.utils.module_loading import import_string
from django_q.models import OrmQ
from playwright.sync_api import expect

from memories.models import ExportJob
from memories.services.remember import RememberInput, memory_remember
from tests.factories import UserFactory, make_scope
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.django_db(transaction=True)


def test_export_a_scope_with_progress_and_download_it(session, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    owner = UserFactory(username="ines")
    team = make_scope(owner=owner, slug="platform")
    for text in (
        "Deploys go out on Thursdays.",
        "The API gateway is Envoy.",
        "CI runs on Buildkite.",
    ):
        memory_remember(
            actor=Actor(user=owner, surface="dashboard"),
            request=RememberInput(content=text, kind="fact", scope=team.public_id),
        )
    page = session.page(owner)
    page.goto(f"/scopes/{team.public_id}/")
    page.get_by_role("button", name="Export", exact=True).click()
    expect(page.locator("#export-progress")).to_contain_text("Exporting: 0 of 3 memories")
    expect(page.locator("#export-progress progress")).to_be_visible()
    session.screenshot(page, "export-progress")

    # The worker takes the queued task.
    [queued] = OrmQ.objects.all()
    task = queued.task
    assert task["func"] == "memories.portability.tasks.export_prepare"
    queued.delete()
    assert import_string(task["func"])(*task["args"], **task["kwargs"]) == "ready"

    link = page.get_by_role("link", name="Download the zip")
    expect(page.locator("#export-progress")).to_contain_text("Ready: 3 memories exported.")
    session.screenshot(page, "export-ready")
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == "zero-memory-platform.zip"
    with zipfile.ZipFile(download.path()) as archive:
        assert "manifest.json" in archive.namelist()
        assert len([name for name in archive.namelist() if name.endswith(".md")]) == 3
    job = ExportJob.objects.get(scope=team)
    assert not (tmp_path / "exports" / f"{job.public_id}.zip").exists()


def test_delete_my_account_from_the_account_page(session):
    user = UserFactory(username="otto")
    page = session.page(user)
    page.goto("/")
    page.get_by_role("link", name="Account", exact=True).click()
    expect(page.get_by_role("heading", name="Delete my account")).to_be_visible()
    page.get_by_label("Your password").fill("wrong password")
    page.get_by_label(re.compile("I understand")).check()
    page.get_by_role("button", name="Delete my account").click()
    expect(page.get_by_text("This is not the account's password.")).to_be_visible()

    page.get_by_label("Your password").fill("correct horse battery")
    page.get_by_label(re.compile("I understand")).check()
    session.screenshot(page, "account-delete")
    page.get_by_role("button", name="Delete my account").click()
    expect(page).to_have_url(re.compile(r"/login/$"))
    expect(page.get_by_text("Your account was deleted. Goodbye.")).to_be_visible()
    assert not get_user_model().objects.filter(username="otto").exists()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/"))
