"""The admin: kind catalogue, memory lists that surface stuck translations, retry, no delete."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django_q.models import OrmQ

from memories.canonical import tasks
from memories.models import Memory, MemoryKind, MemoryVersion, TranslationStatus
from tests.factories import UserFactory
from tests.fakes.anthropic_api import status, tool_answer

GERMAN = "Wir deployen jeden Freitag nach dem Mittagessen auf die Produktionsumgebung."
ENGLISH = "We deploy to production every Friday after lunch."
OTHER_GERMAN = "Die Staging-Datenbank wird jede Nacht um zwei Uhr zurückgesetzt."

CHANGELIST = reverse("admin:memories_memory_changelist")


def remember(client, content, scope) -> Memory:
    response = client.post(
        "/api/v1/memories",
        {"content": content, "kind": "decision", "scope": scope.public_id, "verbatim": "so"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return Memory.objects.get(public_id=response.json()["id"])


@pytest.fixture
def memories(
    tenancy, api, fake_anthropic, settings, monkeypatch, django_capture_on_commit_callbacks
):
    """An English memory, a pending German one and a failed German one."""
    from django_q.conf import Conf

    owner = api(tenancy.owner)
    english = remember(owner, "Run the linters before every push.", tenancy.team)
    pending = remember(owner, OTHER_GERMAN, tenancy.team)
    settings.TRANSLATION_MAX_ATTEMPTS = 1
    fake_anthropic.script(status(500))
    monkeypatch.setattr(Conf, "SYNC", True)
    with django_capture_on_commit_callbacks(execute=True):
        failed = remember(owner, GERMAN, tenancy.team)
    monkeypatch.setattr(Conf, "SYNC", False)
    failed.refresh_from_db()
    assert failed.translation_status == TranslationStatus.FAILED
    return {"english": english, "pending": pending, "failed": failed}


def _ids_in(response) -> set[str]:
    html = response.content.decode()
    return {
        public_id
        for public_id in Memory.objects.values_list("public_id", flat=True)
        if public_id in html
    }


def test_memory_changelist_renders_and_filters_the_translation_queue(admin_client, memories):
    everything = admin_client.get(CHANGELIST)
    assert everything.status_code == 200
    assert _ids_in(everything) == {m.public_id for m in memories.values()}

    attention = admin_client.get(CHANGELIST, {"queue": "attention"})
    assert attention.status_code == 200
    assert _ids_in(attention) == {memories["pending"].public_id, memories["failed"].public_id}
    assert _ids_in(admin_client.get(CHANGELIST, {"queue": "failed"})) == {
        memories["failed"].public_id
    }
    assert _ids_in(admin_client.get(CHANGELIST, {"translation_status__exact": "pending"})) == {
        memories["pending"].public_id
    }
    assert _ids_in(admin_client.get(CHANGELIST, {"q": "Staging-Datenbank"})) == {
        memories["pending"].public_id
    }
    for query in (
        {"valid__exact": "1"},
        {"kind__slug__exact": "decision"},
        {"author_kind": "agent"},
    ):
        assert admin_client.get(CHANGELIST, query).status_code == 200


def test_memory_change_page_shows_provenance_and_versions_without_delete(admin_client, memories):
    memory = memories["failed"]
    page = admin_client.get(reverse("admin:memories_memory_change", args=[memory.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert memory.translation_error in html  # the last error, read-only
    assert "deletelink" not in html and "/delete/" not in html
    assert 'name="content_original"' not in html  # read-only, not an input
    assert 'name="translation_claim"' not in html


def test_delete_and_add_are_not_offered(admin_client, memories):
    changelist = admin_client.get(CHANGELIST)
    actions = dict(changelist.context["action_form"].fields["action"].choices)
    assert "delete_selected" not in actions and "retry_translation" in actions
    memory = memories["english"]
    delete_url = reverse("admin:memories_memory_delete", args=[memory.pk])
    assert admin_client.get(delete_url).status_code == 403
    assert admin_client.post(delete_url, {"post": "yes"}).status_code == 403
    assert admin_client.get(reverse("admin:memories_memory_add")).status_code == 403
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_retry_action_turns_failed_into_pending_and_queues_it(
    admin_client, memories, fake_anthropic, django_capture_on_commit_callbacks
):
    failed, english = memories["failed"], memories["english"]
    assert not OrmQ.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            CHANGELIST,
            {"action": "retry_translation", "_selected_action": [failed.pk, english.pk]},
            follow=True,
        )
    assert response.status_code == 200
    notes = [str(message) for message in response.context["messages"]]
    assert any("1 memory queued" in note for note in notes), notes
    assert any("1 memory needs no translation" in note for note in notes), notes

    failed.refresh_from_db()
    assert failed.translation_status == TranslationStatus.PENDING
    assert failed.translation_attempts == 0 and failed.translation_claim
    english.refresh_from_db()
    assert english.translation_status == TranslationStatus.SKIPPED

    [task] = [item.task for item in OrmQ.objects.all()]
    assert task["func"] == tasks.CANONICALIZE_TASK
    assert task["args"] == (failed.id, failed.translation_claim)

    # The queued task does what a worker would do with it.
    fake_anthropic.script(tool_answer(ENGLISH))
    assert tasks.canonicalize(*task["args"]) == "done"
    failed.refresh_from_db()
    assert (failed.translation_status, failed.content, failed.content_original) == (
        "done",
        ENGLISH,
        GERMAN,
    )


def test_an_admin_edit_goes_through_the_edit_service(admin_client, memories):
    memory = memories["english"]
    url = reverse("admin:memories_memory_change", args=[memory.pk])
    data = {
        "kind": "convention",
        "content": "Run the linters and the tests before every push.",
        "provenance-TOTAL_FORMS": "0",
        "provenance-INITIAL_FORMS": "0",
        "versions-TOTAL_FORMS": "0",
        "versions-INITIAL_FORMS": "0",
    }
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    memory.refresh_from_db()
    assert memory.content == "Run the linters and the tests before every push."
    assert memory.kind_id == "convention"
    assert memory.content_revision == 2
    [version] = MemoryVersion.objects.filter(memory=memory)
    assert version.content == "Run the linters before every push."


def test_staff_edit_kind_labels_per_language(client, db):
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    changelist = client.get(reverse("admin:memories_memorykind_changelist"))
    assert changelist.status_code == 200
    assert "Decision" in changelist.content.decode()

    url = reverse("admin:memories_memorykind_change", args=["decision"])
    form = client.get(url)
    assert form.status_code == 200
    html = form.content.decode()
    assert 'name="label_de"' in html and 'name="description_ja"' in html

    kind = MemoryKind.objects.get(slug="decision")
    data = {
        "slug": "decision",
        "weight": "1.5",
        "half_life_days": kind.half_life_days,
        "position": kind.position,
    }
    for lang in ("en", "es", "de", "fr", "ja"):
        data[f"label_{lang}"] = getattr(kind, f"label_{lang}") or ""
        data[f"description_{lang}"] = getattr(kind, f"description_{lang}") or ""
    data["label_de"] = "Beschluss"
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    kind.refresh_from_db()
    assert (kind.label_de, kind.weight) == ("Beschluss", 1.5)


def test_non_staff_cannot_reach_the_admin(client, db):
    client.force_login(UserFactory())
    response = client.get(reverse("admin:memories_memorykind_changelist"))
    assert response.status_code == 302 and "login" in response["Location"]
