"""Memories: list, filters, search through recall, detail with the Original disclosure, remember,
edit, forget and restore, and the tenancy rules of each page."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from memories.models import ActivityLog, Memory
from memories.recall.recall import recall
from tests.dashboard.conftest import HTMX, remember, verbatim_of


def test_the_list_shows_readable_memories_only(tenancy, memories, login):
    body = login(tenancy.reader).get("/").content.decode()
    assert "Releases are cut on Tuesdays." in body
    assert "I prefer small pull requests." not in body  # the owner's personal scope
    outsider = login(tenancy.outsider).get("/").content.decode()
    assert "Releases are cut on Tuesdays." not in outsider
    assert "No memories here yet." in outsider


def test_kind_labels_come_from_the_catalogue_in_the_readers_language(tenancy, memories, login):
    body = login(tenancy.owner, "de").get("/").content.decode()
    assert ">Entscheidung</span>" in body and ">Fakt</span>" in body
    body = login(tenancy.owner, "ja").get("/").content.decode()
    assert ">決定事項</span>" in body and ">事実</span>" in body
    # and the memory content itself is never translated
    assert "Releases are cut on Tuesdays." in body


def test_filters(tenancy, memories, login):
    client = login(tenancy.owner)
    body = client.get("/", {"kind": "preference"}).content.decode()
    assert "I prefer small pull requests." in body and "Tuesdays" not in body
    body = client.get("/", {"scope": tenancy.team.public_id}).content.decode()
    assert "Tuesdays" in body and "small pull requests" not in body
    body = client.get("/", {"translation_status": "done"}).content.decode()
    assert "Database migrations run before the deploy" in body and "Tuesdays" not in body
    Memory.objects.filter(pk=memories.team.pk).update(valid_until=timezone.now())
    assert "Tuesdays" not in client.get("/").content.decode()
    assert "Tuesdays" in client.get("/", {"state": "forgotten"}).content.decode()
    assert client.get("/", {"kind": "nonsense"}).status_code == 400


def test_a_foreign_scope_filter_answers_404(tenancy, memories, login):
    client = login(tenancy.outsider)
    assert client.get("/", {"scope": tenancy.team.public_id}).status_code == 404
    assert client.get("/", {"scope": tenancy.team.public_id, "q": "releases"}).status_code == 404


def test_pages_of_results(tenancy, login, monkeypatch):
    from dashboard.views import memories as views

    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    for n in range(5):
        remember(tenancy.owner, f"Service number {n} owns its own database.")
    client = login(tenancy.owner)
    first = client.get("/").content.decode()
    assert first.count('class="memory-card') == 2
    next_url = re.search(r'class="more[^"]*" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    more = client.get(next_url, headers=HTMX)
    assert more.status_code == 200
    page = more.content.decode()
    assert "<html" not in page and 'id="results"' not in page  # only the rows and the button
    assert page.count('class="memory-card') == 2
    assert "Service number 2" in page


def test_htmx_filter_requests_get_the_results_partial(tenancy, memories, login):
    response = login(tenancy.owner).get("/", {"kind": "fact"}, headers=HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="results"')
    assert "<html" not in body


def test_search_is_recall_with_the_query_exactly_as_typed(tenancy, memories, login):
    query = "  when are releases cut?  "
    body = login(tenancy.reader).get("/", {"q": query}).content.decode()
    assert "Releases are cut on Tuesdays." in body
    assert 'class="score"' in body
    row = ActivityLog.objects.get(operation="recall")
    assert row.query == query
    assert row.surface == "dashboard"
    assert row.user == tenancy.reader
    assert [r["id"] for r in row.results][0] == memories.team.public_id


def test_search_in_another_language_is_not_translated(tenancy, memories, login):
    query = "¿Cuándo se publican las versiones?"
    login(tenancy.owner, "es").get("/", {"q": query})
    assert ActivityLog.objects.get(operation="recall").query == query


def test_a_blank_query_browses_instead_of_searching(tenancy, memories, login):
    body = login(tenancy.owner).get("/", {"q": "   "}).content.decode()
    assert "Releases are cut on Tuesdays." in body
    assert not ActivityLog.objects.filter(operation="recall").exists()


def test_search_results_are_the_recall_results(tenancy, memories, login):
    from zeromemory.core.actor import Actor

    body = login(tenancy.owner).get("/", {"q": "deploy migrations"}).content.decode()
    hits = recall(actor=Actor(user=tenancy.owner), query="deploy migrations", k=30)
    shown = re.findall(r'id="card-(mem_[a-z0-9]+)"', body)
    assert shown == [hit.id for hit in hits]


def test_a_search_that_finds_nothing_relevant_says_so_and_offers_the_nearest(
    tenancy, memories, login
):
    client = login(tenancy.owner)
    query = "zqxv kwyjibo flurble"
    body = client.get("/", {"q": query}).content.decode()
    assert "Nothing relevant to your search was found." in body
    assert 'id="card-' not in body
    link = re.search(r'<a href="([^"]*nearest=1[^"]*)"', body).group(1).replace("&amp;", "&")
    assert ActivityLog.objects.get(operation="recall").outcome == "empty"
    nearest = client.get(link).content.decode()
    assert "they are the nearest memories, shown as you asked" in nearest
    assert re.findall(r'id="card-(mem_[a-z0-9]+)"', nearest)
    # Through HTMX the link swaps the results alone; a new search asks for relevant ones again.
    partial = client.get(link, headers=HTMX).content.decode()
    assert partial.lstrip().startswith('<section id="results"')
    again = client.get("/", {"q": "when are releases cut?"}).content.decode()
    assert "Releases are cut on Tuesdays." in again and "shown as you asked" not in again
    # In the reader's language.
    german = login(tenancy.owner, "de").get("/", {"q": query}).content.decode()
    assert "Zu Ihrer Suche wurde nichts Relevantes gefunden." in german


def test_the_detail_page_and_the_original_disclosure(tenancy, memories, login):
    body = login(tenancy.reader, "en").get(f"/memories/{memories.translated.public_id}/")
    page = body.content.decode()
    assert body.status_code == 200
    assert '<p class="content large" lang="en">Database migrations run before the deploy' in page
    assert '<details class="original">' in page
    assert "Original · German" in page
    assert (
        '<blockquote lang="de">Datenbankmigrationen laufen vor dem Deployment, niemals danach.'
        in page
    )
    # the page of a reader offers no edit, forget or restore
    assert "/edit/" not in page and "/forget/" not in page and "/restore/" not in page


def test_the_original_disclosure_shows_a_verbatim_phrase(tenancy, login):
    memory = remember(
        tenancy.owner,
        "The team prefers boring technology.",
        kind="preference",
        verbatim="Langweilige Technik ist gute Technik.",
    )
    assert verbatim_of(memory)
    page = login(tenancy.owner).get(f"/memories/{memory.public_id}/").content.decode()
    assert '<details class="original">' in page
    assert "Langweilige Technik ist gute Technik." in page
    listing = login(tenancy.owner).get("/").content.decode()
    assert "Langweilige Technik ist gute Technik." in listing


def test_an_english_memory_has_no_original_disclosure(tenancy, memories, login):
    page = login(tenancy.owner).get(f"/memories/{memories.team.public_id}/").content.decode()
    assert 'class="original"' not in page


MEMORY_PAGES = [
    ("get", ""),
    ("post", "edit/"),
    ("post", "forget/"),
    ("post", "restore/"),
]


@pytest.mark.parametrize(("method", "suffix"), MEMORY_PAGES)
def test_an_outsider_gets_404_like_for_a_missing_memory(tenancy, memories, login, method, suffix):
    client = login(tenancy.outsider)
    data = {"content": "hijacked", "kind": "fact", "reason": "because"}
    for memory_id in (memories.team.public_id, "mem_missing"):
        response = getattr(client, method)(f"/memories/{memory_id}/{suffix}", data)
        assert response.status_code == 404
    assert Memory.objects.get(pk=memories.team.pk).content == "Releases are cut on Tuesdays."


@pytest.mark.parametrize("suffix", ["edit/", "forget/", "restore/"])
def test_a_reader_cannot_write(tenancy, memories, login, suffix):
    if suffix == "restore/":
        Memory.objects.filter(pk=memories.team.pk).update(valid_until=timezone.now())
    response = login(tenancy.reader).post(
        f"/memories/{memories.team.public_id}/{suffix}",
        {"content": "Releases are cut on Fridays.", "kind": "fact", "reason": "outdated"},
    )
    assert response.status_code == 403
    memory = Memory.objects.get(pk=memories.team.pk)
    assert memory.content == "Releases are cut on Tuesdays."
    assert memory.valid is (suffix != "restore/")
