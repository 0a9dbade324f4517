"""An import's authority, times and ids come from the server (issue 37, finding 1): the importing
credential is the author, the archive's author and times are claims in provenance, only a scope
admin keeps the archive's times, ids are always the server's; a request embeds a bounded budget
(the command none). Through REST and the command."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from memories.models import Memory, Provenance
from tests.factories import make_scope
from tests.fakes.anthropic_api import tool_answer
from tests.memories.archive_support import (
    AWS_KEY,
    CLAIMED,
    ID,
    OTHER_ID,
    TEXT,
    archive,
    memory_bytes,
    one,
    path_of,
    post,
    refused,
)
from tests.memories.canonical_support import ENGLISH, GERMAN


@pytest.fixture
def writer(tenancy, api, kinds_seeded):
    """The writer's agent: a token."""
    return api(tenancy.writer)


# Authority and time come from the importing credential; the archive's are claims.


def recall(client, scope_id: str, as_of: str | None = None) -> list[str]:
    body = {"query": TEXT, "scopes": [scope_id], **({"as_of": as_of} if as_of else {})}
    response = client.post("/api/v1/recall", body, format="json")
    assert response.status_code == 200, response.json()
    return [item["content"] for item in response.json()["results"]]


def test_an_agent_imports_as_an_agent_with_the_archive_as_claims(tenancy, writer):
    scope = tenancy.team
    response = post(writer, scope.public_id, one())
    assert response.status_code == 200, response.json()
    memory = Memory.objects.get()
    assert (memory.author_kind, memory.created_by, memory.scope) == ("agent", tenancy.writer, scope)
    assert memory.created_at >= scope.created_at and memory.valid_from >= scope.created_at
    [row] = Provenance.objects.filter(memory=memory)
    assert (row.source_kind, row.created_by) == ("import", tenancy.writer)
    assert row.claims["author"] == {"kind": "human", "client": "", "user": "somebody"}
    assert row.claims["created"] == CLAIMED and row.claims["id"] == ID
    # as_of in a scope created today does not find it in 2024.
    assert recall(writer, scope.public_id) == [TEXT]
    assert recall(writer, scope.public_id, "2024-06-01T00:00:00Z") == []


def test_only_a_scope_admin_keeps_the_archive_times(tenancy, writer, api):
    scope = tenancy.team.public_id
    response = post(writer, scope, one(), "?keep_times=true")
    assert response.status_code == 403, response.json()
    assert post(writer, scope, one(), "?keep_times=maybe").status_code == 400
    owner = api(tenancy.owner)
    response = post(owner, scope, one(), "?keep_times=true")
    assert response.status_code == 200, response.json()
    memory = Memory.objects.get()
    assert memory.created_at == datetime.fromisoformat(CLAIMED)
    assert memory.author_kind == "agent" and memory.created_by == tenancy.owner
    assert recall(owner, scope, "2024-06-01T00:00:00Z") == [TEXT]
    # Kept times are still bounded to what the server computes with.
    old = archive({path_of(OTHER_ID): memory_bytes(id=OTHER_ID, created="1970-01-01T00:00:00Z")})
    assert post(owner, scope, old, "?keep_times=true").status_code == 400


# Ids: always the server's, whether the archive's exists elsewhere or not.


def test_an_archive_id_is_never_kept_so_its_existence_does_not_leak(tenancy, writer, api):
    elsewhere = api(tenancy.outsider).post(
        "/api/v1/memories", {"content": "An outsider's own note.", "kind": "fact"}, format="json"
    )
    taken = elsewhere.json()["id"]
    scope = tenancy.team.public_id
    answers = []
    for archive_id, text in ((taken, TEXT), (OTHER_ID, "Backups are kept for ninety days.")):
        data = archive({path_of(archive_id): memory_bytes(text, id=archive_id)})
        response = post(writer, scope, data)
        assert response.status_code == 200, response.json()
        answers.append(response.json())
        stored = Memory.objects.get(content=text)
        assert stored.public_id != archive_id
    assert answers[0] == answers[1]
    # A second import of the same archive into the scope writes nothing (the ledger maps ids).
    again = post(writer, scope, archive({path_of(OTHER_ID): memory_bytes(id=OTHER_ID)}))
    assert again.json()["skipped"] == 1 and again.json()["imported"] == 0


# Embeddings: a bounded budget per request; the command has none.


def test_a_request_embeds_at_most_its_budget(tenancy, writer, tmp_path):
    data = one(memory_bytes("Long enough. " * 100))
    with override_settings(IMPORT_MAX_EMBED_CHARS=1000):
        refused(post(writer, tenancy.team.public_id, data), "manage.py import_export")
        path = tmp_path / "big.zip"
        path.write_bytes(data)
        scope = tenancy.team.public_id
        call_command("import_export", str(path), "--scope", scope, "--user", "writer")
    memory = Memory.objects.get()
    assert memory.author_kind == "human" and memory.created_by == tenancy.writer


def test_a_request_parses_at_most_its_bytes(tenancy, writer):
    """Every text of an archive is parsed and written in the request, not only what is embedded:
    provenance that embeds nothing still counts against the request's bytes."""
    row = {"source": "remember", "written_text": "Said in review. " * 300, "created": CLAIMED}
    data = one(memory_bytes(provenance=[row] * 4))
    with override_settings(IMPORT_MAX_REQUEST_BYTES=8192):
        refused(post(writer, tenancy.team.public_id, data), "decompresses to more")
    assert not Memory.objects.exists()
    assert post(writer, tenancy.team.public_id, data).status_code == 200


def test_the_command_refuses_what_rest_refuses(tenancy, kinds_seeded, tmp_path):
    path = tmp_path / "secret.zip"
    path.write_bytes(one(memory_bytes(f"The deploy key id is {AWS_KEY}.")))
    scope = tenancy.team.public_id
    with pytest.raises(CommandError, match="Secrets are never stored"):
        call_command("import_export", str(path), "--scope", scope, "--user", "writer")
    path.write_bytes(one())
    with pytest.raises(CommandError, match="admin"):
        call_command(
            "import_export", str(path), "--scope", scope, "--user", "writer", "--keep-times"
        )
    assert not Memory.objects.exists()
    other = make_scope(owner=tenancy.owner, slug="copy")
    call_command(
        "import_export", str(path), "--scope", other.public_id, "--user", "owner", "--keep-times"
    )
    assert Memory.objects.get().created_at == datetime.fromisoformat(CLAIMED)


def test_text_that_is_not_english_is_canonicalized_as_a_remember_would_be(
    tenancy, writer, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    fake_anthropic.script(tool_answer(ENGLISH))
    data = one(memory_bytes(GERMAN, language="en", translation="skipped"))
    with django_capture_on_commit_callbacks(execute=True):
        assert post(writer, tenancy.team.public_id, data).status_code == 200
    memory = Memory.objects.get()
    assert (memory.content, memory.content_original) == (ENGLISH, GERMAN)
    assert memory.content_lang == "de" and memory.translation_status == "done"
