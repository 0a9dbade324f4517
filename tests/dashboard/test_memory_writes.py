"""Dashboard writes of memories: edit, forget and restore, remember, in the user's language."""

from __future__ import annotations

import re

from memories.models import ActivityLog, Memory, MemoryVersion, SourceKind
from tests.dashboard.conftest import HTMX


def test_edit_keeps_a_version(tenancy, memories, login):
    client = login(tenancy.writer)
    url = f"/memories/{memories.team.public_id}/"
    response = client.post(
        url + "edit/", {"content": "Releases are cut on Wednesdays.", "kind": "decision"}
    )
    assert response.status_code == 302 and response["Location"] == url
    memory = Memory.objects.get(pk=memories.team.pk)
    assert (memory.content, memory.kind_id) == ("Releases are cut on Wednesdays.", "decision")
    version = MemoryVersion.objects.get(memory=memory)
    assert (version.content, version.edited_by) == ("Releases are cut on Tuesdays.", tenancy.writer)
    page = client.get(url).content.decode()
    assert "Version 1" in page and "Releases are cut on Tuesdays." in page


def test_edit_through_htmx_answers_the_detail_partial(tenancy, memories, login):
    response = login(tenancy.writer).post(
        f"/memories/{memories.team.public_id}/edit/",
        {"content": "Releases are cut on Mondays.", "kind": "fact"},
        headers=HTMX,
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="memory-detail"')
    assert "Releases are cut on Mondays." in body and "Saved." in body


def test_edit_errors_are_shown_on_the_field_in_the_users_language(tenancy, memories, login):
    client = login(tenancy.writer, "de")
    url = f"/memories/{memories.team.public_id}/edit/"
    response = client.post(url, {"content": "", "kind": "fact"})
    assert response.status_code == 422
    assert "Dieses Feld ist zwingend erforderlich." in response.content.decode()
    response = client.post(url, {"content": "   ", "kind": "fact"})
    assert response.status_code == 422
    assert "Der Inhalt ist leer." in response.content.decode()
    assert Memory.objects.get(pk=memories.team.pk).content == "Releases are cut on Tuesdays."


def test_forget_needs_a_reason_and_restore_undoes_it(tenancy, memories, login):
    client = login(tenancy.writer, "es")
    url = f"/memories/{memories.team.public_id}/"
    missing = client.post(url + "forget/", {"reason": ""})
    assert missing.status_code == 422
    assert "Este campo es requerido." in missing.content.decode()
    assert (
        client.post(url + "forget/", {"reason": "superseded by the new policy"}).status_code == 302
    )
    memory = Memory.objects.get(pk=memories.team.pk)
    assert not memory.valid and memory.forgotten_reason == "superseded by the new policy"
    page = client.get(url).content.decode()
    assert "superseded by the new policy" in page and "/restore/" in page
    assert client.post(url + "restore/").status_code == 302
    assert Memory.objects.get(pk=memories.team.pk).valid
    again = client.post(url + "restore/", headers=HTMX)
    assert again.status_code == 422  # already valid: said on the page, nothing changes


def test_remember_writes_through_the_remember_service(tenancy, login):
    client = login(tenancy.writer)
    assert client.get("/remember/").status_code == 200
    response = client.post(
        "/remember/",
        {
            "content": "Feature branches are deleted after merge.",
            "kind": "convention",
            "scope": tenancy.team.public_id,
            "verbatim": "",
        },
    )
    memory = Memory.objects.get(content="Feature branches are deleted after merge.")
    assert response.status_code == 302 and response["Location"] == f"/memories/{memory.public_id}/"
    assert memory.scope == tenancy.team and memory.author_kind == "human"
    assert memory.provenance.get().source_kind == SourceKind.DASHBOARD
    assert ActivityLog.objects.filter(operation="remember", surface="dashboard").exists()


def test_remember_in_another_language_is_queued_for_canonicalization(tenancy, login):
    login(tenancy.owner).post(
        "/remember/",
        {
            "content": "Die Staging-Datenbank wird jeden Sonntag um drei Uhr zurückgesetzt.",
            "kind": "gotcha",
            "scope": tenancy.team.public_id,
        },
    )
    memory = Memory.objects.get(content__startswith="Die Staging-Datenbank")
    assert (memory.content_lang, memory.translation_status) == ("de", "pending")


def test_a_reader_cannot_remember_into_the_scope(tenancy, login):
    client = login(tenancy.reader)
    page = client.get("/remember/").content.decode()
    assert tenancy.team.public_id not in page  # only writable scopes are offered
    response = client.post(
        "/remember/",
        {"content": "Sneaky.", "kind": "fact", "scope": tenancy.team.public_id},
    )
    assert response.status_code == 422
    assert not Memory.objects.filter(content="Sneaky.").exists()


def test_remember_refuses_a_secret_on_the_field(tenancy, login):
    response = login(tenancy.owner, "fr").post(
        "/remember/",
        {
            "content": "The key is AKIAIOSFODNN7EXAMPLE for the bucket.",
            "kind": "fact",
            "scope": tenancy.team.public_id,
        },
    )
    assert response.status_code == 422
    assert not Memory.objects.filter(content__contains="AKIA").exists()
    body = response.content.decode()
    assert re.search(r'<ul class="errorlist"[^>]*><li>[^<]*AWS', body)


def test_remember_errors_in_the_users_language(tenancy, login):
    response = login(tenancy.owner, "ja").post(
        "/remember/", {"content": "", "kind": "fact", "scope": tenancy.team.public_id}
    )
    assert response.status_code == 422
    assert "この項目は必須です。" in response.content.decode()


def test_the_scope_page_links_to_remember_with_the_scope_chosen(tenancy, login):
    client = login(tenancy.writer)
    scope_page = client.get(f"/scopes/{tenancy.team.public_id}/").content.decode()
    assert f"/remember/?scope={tenancy.team.public_id}" in scope_page
    form = client.get("/remember/", {"scope": tenancy.team.public_id}).content.decode()
    assert f'<option value="{tenancy.team.public_id}" selected>' in form
    reader_page = login(tenancy.reader).get(f"/scopes/{tenancy.team.public_id}/").content.decode()
    assert "/remember/?scope=" not in reader_page
