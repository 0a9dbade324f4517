"""An archive import passes the guards of every write (issue 37, finding 1): YAML without
anchors, aliases or tags; a 400 naming the file for every malformed archive; remember's limits
and content guard on every field. Through REST (the command: test_import_authority.py)."""

from __future__ import annotations

import json

import pytest

from memories.models import Provenance
from memories.portability import format as fmt
from tests.memories.archive_support import (
    AWS_KEY,
    CLAIMED,
    ID,
    MALFORMED,
    PASSWORD,
    TEXT,
    archive,
    fields,
    memory_bytes,
    one,
    path_of,
    post,
    raw_file,
    refused,
)


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
    long = json.dumps([{**conflict, "rationale": "Too long. " * 2000}]).encode()
    files = {path_of(): memory_bytes(), fmt.CONFLICTS: long}
    refused(post(writer, tenancy.team.public_id, archive(files)), fmt.CONFLICTS, "longer")
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
