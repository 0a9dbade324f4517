"""The bad-input matrix for bodies that are archives: every import route of the tenancy table
(`extra={"archive": True}`) against a table of malformed archives. Each must answer 400 with the
error envelope, its details naming `archive` and its message the file at fault, and write
nothing; never a 5xx. Each case runs in a savepoint that is rolled back."""

from __future__ import annotations

import json

import pytest

from memories.models import Memory
from memories.portability import format as fmt
from tests.memories.archive_support import (
    CLAIMED,
    ID,
    MALFORMED,
    archive,
    fields,
    memory_bytes,
    one,
    path_of,
    raw_file,
)
from tests.security.surfaces import API_ROWS, Row
from tests.security.test_bad_input_matrix import rolled_back
from tests.security.world import world_fixtures

shared_world, world = world_fixtures(export=True)

IMPORTS = [row for row in API_ROWS if row.extra.get("archive")]
_OTHER_FIELDS = "".join(f"{k}: {json.dumps(v)}\n" for k, v in fields().items() if k != "original")
_ALIASES = ", ".join(["*p"] * 100)
_PAD = json.dumps("x" * 10_000)
_ROW = {"source": "remember", "created": CLAIMED}

# (archive, the file the refusal must name, or "" when the archive as a whole is at fault)
BAD_ARCHIVES: dict[str, tuple[bytes, str]] = {
    **{what: (one(data), path_of()) for what, data in MALFORMED.items()},
    "alias bomb": (
        one(
            raw_file(f"pad: &p {json.dumps('x' * 10_000)}\n{_OTHER_FIELDS}original: [{_ALIASES}]\n")
        ),
        path_of(),
    ),
    "python tag": (one(raw_file(_OTHER_FIELDS + "original: !!python/name:os.system\n")), path_of()),
    "content past remember's limit": (one(memory_bytes("x" * 32_000)), path_of()),
    "too many provenance rows": (one(provenance=[_ROW] * 1001), path_of()),
    "too many versions": (
        one(versions=[{"number": 1, "kind": "fact", "content": "Old.", "created": CLAIMED}] * 101),
        path_of(),
    ),
    "unknown kind": (archive({path_of(kind="nonsense"): memory_bytes(kind="nonsense")}), ID),
    "review queue not json": (
        archive({path_of(): memory_bytes(), fmt.CONFLICTS: b"{"}),
        "conflicts",
    ),
    "empty request body": (b"", ""),
    "not a zip": (b"PK\x03\x04 not a zip", ""),
}


@pytest.mark.parametrize("row", IMPORTS, ids=lambda row: row.id)
def test_rest_imports_refuse_bad_archives_naming_the_file(world, row: Row):
    client = world.api("owner")
    path = world.fill(row.path)
    before = Memory.objects.count()
    problems = []
    for what, (data, named) in BAD_ARCHIVES.items():
        with rolled_back():
            response = client.post(path, data, content_type="application/zip")
            written = Memory.objects.count() - before
        if response.status_code != 400 or written:
            problems.append((what, response.status_code, written, response.content[:200]))
            continue
        error = response.json()["error"]
        if error["code"] != "validation_failed" or "archive" not in error["details"]:
            problems.append((what, error))
        elif named and named not in error["message"]:
            problems.append((what, "does not name", named, error["message"]))
    assert not problems, problems
