"""An archive import is a write like any other (issue 37, finding 1): YAML without anchors,
aliases or tags; remember's limits and content guard; authority and times from the importing
credential, the archive's as claims; server-assigned ids; a 400 naming the file for every
malformed archive; a per-request budget of text to embed. Through REST and the command."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import datetime

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from memories.models import ImportedMemory, Memory, Provenance
from memories.portability import format as fmt
from tests.factories import make_scope

ID = "mem_01jd0000000000000000000001"
OTHER_ID = "mem_01jd0000000000000000000002"
CLAIMED = "2024-01-02T00:00:00.000000+00:00"
TEXT = "The staging database is rebuilt every Monday at six."


def fields(**changes) -> dict:
    base = {
        "id": ID,
        "kind": "fact",
        "scope": "scp_01jd0000000000000000000000",
        "state": "valid",
        "author": {"kind": "human", "client": "", "user": "somebody"},
        "created": CLAIMED,
        "updated": CLAIMED,
        "language": "en",
        "translation": "skipped",
        "original": "",
        "forgotten": None,
        "restored": None,
        "superseded_by": None,
        "superseded_at": None,
        "supersedes": [],
        "disputed": [],
        "provenance": [],
        "versions": [],
        "validity": [],
    }
    return {**base, **changes}


def path_of(memory_id: str = ID, kind: str = "fact") -> str:
    return f"memories/team/{kind}/{memory_id}.md"


def memory_bytes(content: str = TEXT, **changes) -> bytes:
    return fmt.memory_file(fields(**changes), content)


def raw_file(front_matter: str, body: str = TEXT) -> bytes:
    return f"---\n{front_matter}---\n{body}".encode()


def archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for name, body in files.items():
            out.writestr(name, body)
        manifest = {
            "format": fmt.FORMAT_NAME,
            "format_version": fmt.FORMAT_VERSION,
            "files": {name: hashlib.sha256(body).hexdigest() for name, body in files.items()},
        }
        out.writestr(fmt.MANIFEST, json.dumps(manifest))
    return buffer.getvalue()


def one(data: bytes | None = None, **changes) -> bytes:
    return archive({path_of(): data if data is not None else memory_bytes(**changes)})


def post(client, scope_id: str, data: bytes, query: str = ""):
    return client.post(
        f"/api/v1/scopes/{scope_id}/import-export{query}", data, content_type="application/zip"
    )


def refused(response, *names: str) -> str:
    assert response.status_code == 400, response.content[:500]
    error = response.json()["error"]
    assert error["code"] == "validation_failed" and "archive" in error["details"], error
    for name in names:
        assert name in error["message"], (name, error["message"])
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()
    return error["message"]


@pytest.fixture
def writer(tenancy, api, kinds_seeded):
    """The writer's agent: a token."""
    return api(tenancy.writer)


# YAML: no anchors, aliases or tags.


def test_an_alias_bomb_is_refused_before_it_expands(tenancy, writer):
    pad = json.dumps({"pad": "x" * 10_000})
    aliases = ", ".join(["*p"] * 100)
    front = "".join(f"{k}: {json.dumps(v)}\n" for k, v in fields().items() if k != "provenance")
    data = raw_file(f"pad: &p {pad}\n{front}provenance: [{aliases}]\n")
    assert len(data) < 12_000
    refused(post(writer, tenancy.team.public_id, one(data)), path_of(), "anchor or alias")


@pytest.mark.parametrize(
    "line",
    [
        'original: !!python/object/apply:os.system ["true"]\n',
        "original: !!str 12\n",
        "original: !custom x\n",
    ],
)
def test_a_tag_is_refused_naming_the_file(tenancy, writer, line):
    front = "".join(f"{k}: {json.dumps(v)}\n" for k, v in fields().items() if k != "original")
    refused(post(writer, tenancy.team.public_id, one(raw_file(front + line))), path_of(), "tag")


# Every malformed archive: 400 naming the file, never a 500.

FRONT = "".join(f"{key}: {json.dumps(value)}\n" for key, value in fields().items())
MALFORMED = {
    "yaml syntax error": raw_file(FRONT + "original: [unclosed\n"),
    "nul in the body": memory_bytes("Deploys\x00 run nightly."),
    "escaped nul \\0": raw_file(FRONT.replace('original: ""', 'original: "a\\0b"')),
    "escaped nul \\x00": raw_file(FRONT.replace('original: ""', 'original: "a\\x00b"')),
    "escaped nul \\u0000": raw_file(FRONT.replace('original: ""', 'original: "a\\u0000b"')),
    "lone surrogate": raw_file(FRONT.replace('original: ""', 'original: "a\\ud800b"')),
    "version beyond int4": memory_bytes(
        versions=[{"number": 2**31, "kind": "fact", "content": "Old.", "created": CLAIMED}]
    ),
    "empty body": memory_bytes(""),
    "blank body": memory_bytes("  \n\t "),
    "time before 2000": memory_bytes(created="1970-01-01T00:00:00+00:00"),
    "time in year 9999": memory_bytes(updated="9999-12-31T23:59:59+00:00"),
    "body not utf-8": raw_file(FRONT, "") + b"\xff\xfe",
    "front matter not a mapping": raw_file("[1, 2]\n"),
    "nested too deep": raw_file(FRONT + "original: " + "[" * 50 + "]" * 50 + "\n"),
}


@pytest.mark.parametrize("what", list(MALFORMED))
def test_a_malformed_memory_file_answers_400_naming_it(tenancy, writer, what):
    refused(post(writer, tenancy.team.public_id, one(MALFORMED[what])), path_of())


def test_malformed_review_queue_answers_400_naming_it(tenancy, writer):
    conflict = {
        "id": "cfl_01jd0000000000000000000001",
        "memory_a": ID,
        "status": "open",
        "rationale": "a\ud800b",
        "created": CLAIMED,
    }
    body = json.dumps([conflict]).encode()  # JSON escapes the surrogate: \ud800
    files = {path_of(): memory_bytes(), fmt.CONFLICTS: body}
    refused(post(writer, tenancy.team.public_id, archive(files)), fmt.CONFLICTS)
    deep = {path_of(): memory_bytes(), fmt.CONFLICTS: b"[" * 5000 + b"]" * 5000}
    refused(post(writer, tenancy.team.public_id, archive(deep)), fmt.CONFLICTS)


def test_an_empty_request_body_answers_400(tenancy, writer):
    refused(post(writer, tenancy.team.public_id, b""), "zip")


# Remember's limits and content guard.


def test_remember_limits_hold_for_an_imported_memory(tenancy, writer, settings):
    scope = tenancy.team.public_id
    refused(post(writer, scope, one(memory_bytes("x " * 16_000))), path_of(), "content")
    settings.IMPORT_MAX_PROVENANCE = 3
    row = {"source": "remember", "author": "somebody", "created": CLAIMED}
    refused(post(writer, scope, one(provenance=[row] * 4)), path_of(), "provenance")
    settings.IMPORT_MAX_VERSIONS = 2
    version = {"number": 1, "kind": "fact", "content": "Older.", "created": CLAIMED}
    refused(post(writer, scope, one(versions=[version] * 3)), path_of(), "versions")
    long_verbatim = {**row, "verbatim": "y" * 20_000}
    refused(post(writer, scope, one(provenance=[long_verbatim])), path_of(), "verbatim")


AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "password: Qx7hunter2vLm"


@pytest.mark.parametrize(
    ("where", "changes"),
    [
        ("content", {"content": f"The deploy key id is {AWS_KEY}."}),
        ("original", {"original": f"Der Schlüssel ist {AWS_KEY}."}),
        (
            "verbatim",
            {"provenance": [{"source": "remember", "verbatim": PASSWORD, "created": CLAIMED}]},
        ),
        (
            "versions[0].content",
            {"versions": [{"number": 1, "kind": "fact", "content": PASSWORD, "created": CLAIMED}]},
        ),
        (
            "forgotten.reason",
            {"state": "forgotten", "forgotten": {"at": CLAIMED, "reason": PASSWORD}},
        ),
    ],
)
def test_the_content_guard_refuses_what_remember_refuses(tenancy, writer, where, changes):
    remembered = writer.post(
        "/api/v1/memories",
        {"content": f"The deploy key id is {AWS_KEY}.", "kind": "fact"},
        format="json",
    )
    assert remembered.status_code == 400  # what remember does with the same text
    content = changes.pop("content", TEXT)
    live = changes.get("state", "valid") == "valid"
    name = path_of() if live else f"archive/team/fact/{ID}.md"
    data = archive({name: memory_bytes(content, **changes)})
    message = refused(post(writer, tenancy.team.public_id, data), name, where)
    assert "Secrets are never stored" in message
    assert not Provenance.objects.exists()


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
