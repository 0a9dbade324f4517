"""Imports from other systems held to the archive path's limits (issue 43's security review):
bounded claims per record, no NUL anywhere, extreme times, secrets in metadata keys, a record
twice in one file, and what a refusal says."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.test import override_settings

from memories.models import ImportedMemory, Memory, Provenance
from tests.memories.graphiti_support import dump
from tests.memories.graphiti_support import graph as graph_of
from tests.memories.import_from_support import AWS_KEY, post


@pytest.fixture
def writer(tenancy, api, kinds_seeded):
    return api(tenancy.writer)


def mem0_item(memory_id: str, text: str, **more) -> dict:
    return {"id": memory_id, "memory": text, "created_at": "2025-01-02T03:04:05+00:00", **more}


def test_a_record_whose_claims_pass_the_cap_is_skipped_with_its_reason(tenancy, writer):
    scope = tenancy.team.public_id
    big = {"blob": "x" * (70 * 1024)}
    body = {
        "results": [
            mem0_item("big", "Deploys run on Tuesdays.", metadata=big),
            mem0_item("small", "Backups run nightly."),
        ]
    }
    dry = post(writer, scope, "mem0", body, "?dry_run=true").json()
    outcomes = {o["source_id"]: o for o in dry["outcomes"]}
    assert outcomes["big"]["outcome"] == "skip" and "characters" in outcomes["big"]["reason"]
    assert outcomes["small"]["outcome"] == "write"
    answer = post(writer, scope, "mem0", body).json()
    assert (answer["written"], answer["skipped"]) == (1, 1)
    assert not Provenance.objects.filter(claims__icontains="xxxxxxxxxx").exists()


def test_a_record_with_more_relations_than_the_archive_allows_is_skipped(tenancy, writer):
    history = [
        {"id": i, "event": "UPDATE", "old_memory": f"Old text {i}.", "updated_at": "2025-01-02"}
        for i in range(1001)
    ]
    body = {"results": [mem0_item("a", "Deploys run on Tuesdays.", history=history)]}
    answer = post(writer, tenancy.team.public_id, "mem0", body, "?dry_run=true").json()
    outcomes = {o["source_id"]: o for o in answer["outcomes"]}
    assert outcomes["a"]["outcome"] == "skip" and "1000" in outcomes["a"]["reason"]


def test_claims_count_against_the_request_budget(tenancy, writer):
    body = {"results": [mem0_item("a", "Short text.", metadata={"note": "y" * 3000})]}
    with override_settings(IMPORT_MAX_EMBED_CHARS=1000):
        response = post(writer, tenancy.team.public_id, "mem0", body)
    assert response.status_code == 400, response.json()
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()


@pytest.mark.parametrize(
    "item",
    [
        {"id": "a\u0000b", "memory": "hi"},
        {"id": "a", "memory": "hi", "metadata": {"k\u0000": "v"}},
        {"id": "a", "memory": "hi", "metadata": {"k": ["v\u0000"]}},
    ],
)
def test_a_nul_anywhere_in_a_record_refuses_the_file_before_anything_is_written(
    tenancy, writer, item
):
    good = [mem0_item(f"g{i}", f"Runbook step {i} restarts worker pool {i}.") for i in range(3)]
    response = post(writer, tenancy.team.public_id, "mem0", {"results": [*good, item]})
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["details"]["body"]
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()


EXTREME = "9999-12-31T23:59:59-23:59"  # after datetime.max once in UTC


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_a_time_out_of_utcs_range_is_read_as_absent(tenancy, writer):
    """mem0 (and Letta, supermemory: the same reading of times), basic-memory and Graphiti."""
    scope = tenancy.team.public_id
    mem0 = {"results": [mem0_item("a", "Deploys run on Tuesdays.", created_at=EXTREME)]}
    answer = post(writer, scope, "mem0", mem0).json()
    assert answer["written"] == 1, answer
    note = f"---\ntitle: Deploys\ncreated: '{EXTREME}'\n---\n- [fact] Backups run nightly.\n"
    response = writer.post(
        f"/api/v1/scopes/{scope}/import-from/basic-memory",
        zipped({"deploys.md": note}),
        content_type="application/zip",
    )
    assert response.status_code == 200 and response.json()["written"] == 1, response.json()
    graph = json.loads(dump(graph_of()))
    for section in ("episodes", "nodes", "edges"):
        for item in graph[section]:
            item["created_at"] = EXTREME
    answer = post(writer, scope, "graphiti", graph).json()
    assert answer["written"] >= 1, answer


def test_a_secret_in_a_metadata_key_is_refused_and_the_reason_does_not_repeat_the_key(
    tenancy, writer
):
    scope = tenancy.team.public_id
    body = {
        "results": [
            mem0_item("k", "Deploys run on Tuesdays.", metadata={AWS_KEY: "v"}),
            mem0_item("n", "Backups run nightly.", metadata={f"a {AWS_KEY}": {"x": "y"}}),
        ]
    }
    answer = post(writer, scope, "mem0", body).json()
    assert (answer["written"], answer["refused"]) == (0, 2), answer
    for outcome in answer["outcomes"]:
        assert outcome["reason"].startswith("source.attributes:"), outcome
        assert "AKIA" not in outcome["reason"]
    assert not Provenance.objects.filter(claims__icontains=AWS_KEY).exists()


def test_a_record_twice_in_one_file_refuses_the_file(tenancy, writer):
    scope = tenancy.team.public_id
    # mem0: a memory whose id is another's history row id ("a#1" is row 1 of "a").
    history = [
        {"id": 1, "event": "ADD", "created_at": "2025-01-01T00:00:00+00:00"},
        {
            "id": 1,
            "event": "UPDATE",
            "old_memory": "Deploys ran on Mondays.",
            "updated_at": "2025-01-02T00:00:00+00:00",
        },
    ]
    body = {
        "results": [
            mem0_item("a", "Deploys run on Tuesdays.", history=history),
            mem0_item("a#1", "Backups run nightly."),
        ]
    }
    response = post(writer, scope, "mem0", body)
    assert response.status_code == 400, response.content[:300]
    assert "twice" in response.json()["error"]["details"]["body"][0]
    # basic-memory: two notes with the same permalink.
    notes = {
        f"{name}.md": f"---\ntitle: {name}\npermalink: same\n---\n- [fact] Backups run nightly.\n"
        for name in ("one", "two")
    }
    response = writer.post(
        f"/api/v1/scopes/{scope}/import-from/basic-memory",
        zipped(notes),
        content_type="application/zip",
    )
    assert response.status_code == 400, response.content[:300]
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()


def test_a_zipped_folder_over_the_requests_limit_is_refused(tenancy, writer):
    note = "---\ntitle: Deploys\n---\n- [fact] Backups run nightly.\n\n" + "z " * 4000
    with override_settings(IMPORT_MAX_REQUEST_BYTES=4096):
        response = writer.post(
            f"/api/v1/scopes/{tenancy.team.public_id}/import-from/basic-memory",
            zipped({"deploys.md": note}),
            content_type="application/zip",
        )
    assert response.status_code == 400, response.content[:300]
    assert not Memory.objects.exists()


def test_a_file_that_is_not_json_is_refused_without_repeating_its_bytes(tenancy, writer):
    data = b'{"results": [{"id": "a", "memory": "hi"} @MARKER-TEXT-OF-THE-FILE and more'
    response = post(writer, tenancy.team.public_id, "mem0", data)
    assert response.status_code == 400
    assert b"MARKER-TEXT" not in response.content, response.content
    assert "not valid JSON" in response.json()["error"]["details"]["body"][0]
