"""Export and import of an export through REST: the round trip, determinism, refusals.

The German memory is translated by the real translator against the fake Messages API; nothing
of ours is patched.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.test import override_settings

from memories.models import ImportedMemory, Memory, Provenance
from memories.portability import format as fmt
from memories.portability.tickets import ticket_issue
from scopes.models import Role
from tests.factories import add_member, make_scope
from tests.fakes.anthropic_api import tool_answer
from tests.memories.archive_support import comparable, entries
from tests.memories.canonical_support import ENGLISH, GERMAN, VERBATIM, write
from zeromemory.core.actor import Actor


def export(client, scope_id: str) -> bytes:
    response = client.get(f"/api/v1/scopes/{scope_id}/export")
    assert response.status_code == 200, response
    assert response.streaming and response["Content-Type"] == "application/zip"
    return b"".join(response.streaming_content)


def recall_texts(client, scope_id: str, query: str) -> list[str]:
    response = client.post(
        "/api/v1/recall", {"query": query, "scopes": [scope_id], "k": 10}, format="json"
    )
    assert response.status_code == 200, response.json()
    return [item["content"] for item in response.json()["results"]]


def post(client, path: str, body: dict | None = None):
    response = client.post(path, body or {}, format="json")
    assert response.status_code < 300, response.json()
    return response.json()


def import_archive(client, scope_id: str, data: bytes, *, keep_times: bool = False):
    query = "?keep_times=true" if keep_times else ""
    return client.post(
        f"/api/v1/scopes/{scope_id}/import-export{query}", data, content_type="application/zip"
    )


@pytest.fixture
def history(tenancy, api, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks):
    """A team scope with a translated memory and its verbatim phrase, an absorbed duplicate, an
    edit (a version), a supersession, a forgotten memory and a resolved challenge."""
    owner = api(tenancy.owner)
    writer = api(tenancy.writer)
    team = tenancy.team
    fake_anthropic.script(tool_answer(ENGLISH))
    german = write(owner, GERMAN, team, django_capture_on_commit_callbacks, verbatim=VERBATIM)
    german.refresh_from_db()
    assert (german.content, german.content_original) == (ENGLISH, GERMAN)
    scope = team.public_id
    add = {"kind": "fact", "scope": scope}
    ports = post(writer, "/api/v1/memories", {"content": "The API listens on port 8080.", **add})
    post(owner, "/api/v1/memories", {"content": "The API listens on port 8080.", **add})
    newer = post(owner, "/api/v1/memories", {"content": "The API listens on port 9090.", **add})
    post(owner, f"/api/v1/memories/{ports['id']}/supersede", {"by": newer["id"]})
    lint = post(owner, "/api/v1/memories", {"content": "Lint runs nightly.", **add})
    response = owner.patch(
        f"/api/v1/memories/{lint['id']}", {"content": "Lint runs on every push."}, format="json"
    )
    assert response.status_code == 200, response.json()
    gone = post(owner, "/api/v1/memories", {"content": "The cache lives in Memcached.", **add})
    post(owner, f"/api/v1/memories/{gone['id']}/forget", {"reason": "We moved to Redis."})
    challenge = post(
        writer, f"/api/v1/memories/{lint['id']}/challenge", {"reason": "It runs on merge only."}
    )
    post(owner, f"/api/v1/conflicts/{challenge['id']}/resolve", {"action": "dismiss"})
    return owner, team


def test_round_trip_keeps_every_memory_and_recall_finds_the_same(db, tenancy, history):
    owner, team = history
    first = export(owner, team.public_id)
    assert export(owner, team.public_id) == first, "the same data exports to the same bytes"
    files = entries(first)
    manifest = json.loads(files[fmt.MANIFEST])
    names = list(files)
    assert names[-1] == fmt.MANIFEST and names[:-1] == sorted(names[:-1])
    assert manifest["format_version"] == 1
    for name, digest in manifest["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == digest
    [summary] = manifest["scopes"]
    assert (summary["memories"], summary["archived"], summary["conflicts"]) == (3, 2, 1)
    assert not any(b"embedding" in body or b"secret_hash" in body for body in files.values())
    german = Memory.objects.get(content=ENGLISH)
    fields, content = fmt.split_memory_file(files[f"memories/team/decision/{german.public_id}.md"])
    assert content == ENGLISH and fields["original"] == GERMAN and fields["language"] == "de"
    assert fields["provenance"][0]["verbatim"] == VERBATIM
    forgotten = Memory.objects.get(content="The cache lives in Memcached.")
    forgotten_file = files[f"archive/team/fact/{forgotten.public_id}.md"]
    [period] = fmt.split_memory_file(forgotten_file)[0]["validity"]
    assert period["ended"] == "forgotten" and period["until"]
    queries = ["deploy to production on Friday", "which port does the API listen on", "lint"]
    before = {query: recall_texts(owner, team.public_id, query) for query in queries}
    assert all(before.values())

    # A fresh database: the scope and every row of it are gone, so its ids are free again.
    assert owner.delete(f"/api/v1/scopes/{team.public_id}").status_code == 204
    assert not Memory.objects.exists()
    fresh = make_scope(owner=tenancy.owner, slug="team")
    fresh.name = team.name
    fresh.save(update_fields=["name"])
    add_member(fresh, tenancy.writer, Role.WRITER)
    response = import_archive(owner, fresh.public_id, first, keep_times=True)
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "scope": fresh.public_id,
        "imported": 5,
        "absorbed": 0,
        "skipped": 0,
        "conflicts": 1,
    }
    # The importer is the author of every memory (an agent: it imported with a token); the
    # archive's authors are names in provenance, and its claims are on the import's rows.
    assert set(Memory.objects.values_list("created_by", "author_kind")) == {
        (tenancy.owner.pk, "agent")
    }
    archived = Provenance.objects.exclude(source_kind="import")
    assert set(archived.values_list("author_name", flat=True)) == {"owner", "writer"}
    claims = Provenance.objects.filter(source_kind="import").values_list("claims", flat=True)
    assert {claim["author"]["user"] for claim in claims} == {"owner", "writer"}
    second = export(owner, fresh.public_id)
    assert comparable(second) == comparable(first)
    after = {query: recall_texts(owner, fresh.public_id, query) for query in queries}
    assert after == before

    again = import_archive(owner, fresh.public_id, first)
    assert again.json()["imported"] == 0 and again.json()["skipped"] == 5
    assert export(owner, fresh.public_id) == second


def test_an_import_into_a_scope_of_the_same_server_gets_new_ids(db, tenancy, history):
    owner, team = history
    data = export(owner, team.public_id)
    other = make_scope(owner=tenancy.owner, slug="copy")
    response = import_archive(owner, other.public_id, data)
    assert response.json()["imported"] == 5, response.json()
    copied = set(Memory.objects.filter(scope=other).values_list("public_id", flat=True))
    assert not copied & set(Memory.objects.filter(scope=team).values_list("public_id", flat=True))
    assert ImportedMemory.objects.filter(scope=other).count() == 5
    # The links point inside the copy.
    superseded = Memory.objects.get(scope=other, superseded_by__isnull=False)
    assert superseded.superseded_by.scope_id == other.id


def test_an_account_export_holds_every_scope_the_caller_administers(db, tenancy, history):
    owner, team = history
    response = owner.get("/api/v1/export")
    manifest = json.loads(entries(b"".join(response.streaming_content))[fmt.MANIFEST])
    assert sorted(scope["slug"] for scope in manifest["scopes"]) == ["personal", "team"]


def _zip(files: dict[str, bytes], *, manifest: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in files.items():
            archive.writestr(name, body)
        if manifest is not None:
            archive.writestr(fmt.MANIFEST, json.dumps(manifest))
    return buffer.getvalue()


def _manifest(files: dict[str, bytes], **changes) -> dict:
    manifest = {
        "format": fmt.FORMAT_NAME,
        "format_version": 1,
        "files": {name: hashlib.sha256(body).hexdigest() for name, body in files.items()},
    }
    return {**manifest, **changes}


def _hostile(good: bytes) -> dict[str, bytes]:
    files = entries(good)
    body = {k: v for k, v in files.items() if k != fmt.MANIFEST}
    name = next(n for n in body if n.startswith("memories/"))
    traversal = {**body, "../../etc/cron.d/x": b"x"}
    bomb = {**body, name: files[name] + b" " * 5_000_000}
    tampered = {**body, name: files[name] + b" (edited)"}
    return {
        "not a zip": b"PK\x03\x04 this is not a zip",
        "path traversal": _zip(traversal, manifest=_manifest(traversal)),
        "absolute path": _zip({**body, "/tmp/x.md": b"x"}, manifest=_manifest(body)),
        "zip bomb": _zip(bomb, manifest=_manifest(bomb)),
        "hash mismatch": _zip(tampered, manifest=json.loads(files[fmt.MANIFEST])),
        "unknown version": _zip(body, manifest=_manifest(body, format_version=99)),
        "no manifest": _zip(body),
        "unlisted file": _zip(body, manifest=_manifest({name: body[name]})),
    }


def test_a_hostile_archive_answers_400_and_writes_nothing(db, tenancy, history):
    owner, team = history
    good = export(owner, team.public_id)
    target = make_scope(owner=tenancy.owner, slug="target")
    before = Memory.objects.count()
    for what, data in _hostile(good).items():
        response = import_archive(owner, target.public_id, data)
        assert response.status_code == 400, (what, response.json())
        assert response.json()["error"]["code"] == "validation_failed", what
        assert Memory.objects.count() == before, what
    with override_settings(IMPORT_MAX_ENTRY_BYTES=256):
        response = import_archive(owner, target.public_id, good)
    assert response.status_code == 400 and "limit per file" in response.json()["error"]["message"]
    with override_settings(IMPORT_MAX_BYTES=2048):
        response = import_archive(owner, target.public_id, good)
    assert response.status_code == 400 and "larger than" in response.json()["error"]["message"]
    assert Memory.objects.count() == before
    assert not ImportedMemory.objects.exists()


def test_the_commands_export_and_import_the_same_archive(db, tenancy, history, tmp_path):
    owner, team = history
    out = tmp_path / "team.zip"
    call_command("export", team.public_id, "--out", str(out))
    assert out.read_bytes() == export(owner, team.public_id)
    other = make_scope(owner=tenancy.owner, slug="copy")
    call_command("import_export", str(out), "--scope", other.public_id, "--user", "owner")
    assert Memory.objects.filter(scope=other).count() == 5


def test_the_mcp_download_url_works_once(db, tenancy, history):
    owner, team = history
    _, signed = ticket_issue(actor=Actor(user=tenancy.owner), scopes=[team])
    anonymous = owner.__class__()
    first = anonymous.get(f"/api/v1/exports/{signed}")
    assert first.status_code == 200
    assert b"".join(first.streaming_content) == export(owner, team.public_id)
    assert anonymous.get(f"/api/v1/exports/{signed}").status_code == 404
    assert anonymous.get(f"/api/v1/exports/{signed[:-2]}xx").status_code == 404
    # Bound to the user's scopes when used: a member removed since downloads nothing.
    _, again = ticket_issue(actor=Actor(user=tenancy.owner), scopes=[team])
    team.memberships.filter(user=tenancy.owner).update(role=Role.READER)
    assert anonymous.get(f"/api/v1/exports/{again}").status_code == 404
