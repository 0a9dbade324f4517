"""Imports from other systems (issue 43): files those systems wrote, through the command, the
REST route and the service; what each record becomes, a dry run, a second import, resume, and
hostile files refused whole."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from memories.models import ImportedMemory, Memory, MemoryLink, Provenance
from tests.memories.canonical_support import GERMAN
from tests.memories.import_from_support import (
    AWS_KEY,
    MEM0_FIRST_TEXT,
    MEM0_MEMORIES,
    letta_agent_file,
    letta_passages,
    mem0_export,
    post,
    supermemory_documents,
)


@pytest.fixture(scope="session")
def mem0_file(tmp_path_factory) -> dict:
    return mem0_export(tmp_path_factory.mktemp("mem0"))


@pytest.fixture
def writer(tenancy, api, kinds_seeded):
    return api(tenancy.writer)


def mem0_item(memory_id: str, text: str, **more) -> dict:
    return {
        "id": memory_id,
        "memory": text,
        "hash": "h",
        "metadata": None,
        "created_at": "2025-01-02T03:04:05+00:00",
        "updated_at": None,
        "user_id": "alice",
        **more,
    }


def by_claimed_id(scope) -> dict[str, Memory]:
    rows = Provenance.objects.filter(memory__scope=scope, source_kind="import")
    return {row.claims["id"]: row.memory for row in rows.select_related("memory")}


# mem0: a store written by mem0's own code, compared record by record.


def test_a_mem0_store_comes_in_record_by_record(tenancy, kinds_seeded, mem0_file, tmp_path):
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(mem0_file))
    scope = tenancy.team.public_id
    out = io.StringIO()
    call_command("import_from", "mem0", str(path), "--scope", scope, "--user", "writer", stdout=out)
    assert "written 5" in out.getvalue(), out.getvalue()
    memories = by_claimed_id(tenancy.team)
    exported = mem0_file["results"]
    assert len(exported) == len(MEM0_MEMORIES)
    for item in exported:
        memory = memories[item["id"]]
        assert memory.content == item["memory"] and memory.valid
        assert memory.created_by == tenancy.writer and memory.author_kind == "human"
        claims = Provenance.objects.get(memory=memory, source_kind="import").claims
        assert claims["system"] == "mem0"
        assert claims["attributes"]["user_id"] == item["user_id"]
        assert claims["attributes"].get("agent_id") == item.get("agent_id")
        assert claims["attributes"].get("run_id") == item.get("run_id")
        assert claims["created_at"][:19] == item["created_at"][:19]
        assert claims["attributes"]["history"][0]["event"] == "ADD"
    kinds = {memories[i["id"]].content: memories[i["id"]].kind_id for i in exported}
    assert kinds[MEM0_MEMORIES[2][0]] == "preference"
    assert kinds[MEM0_MEMORIES[3][0]] == "convention"
    # The text an update replaced is kept, valid until the update; the deleted memory (not in
    # get_all) is not there.
    [earlier] = Memory.objects.filter(scope=tenancy.team, content=MEM0_FIRST_TEXT)
    assert not earlier.valid and earlier.valid_until is not None
    assert Memory.objects.filter(scope=tenancy.team).count() == 5
    # A second import of the same file writes nothing.
    out = io.StringIO()
    call_command("import_from", "mem0", str(path), "--scope", scope, "--user", "writer", stdout=out)
    assert "written 0" in out.getvalue() and "already there 5" in out.getvalue()
    assert Memory.objects.filter(scope=tenancy.team).count() == 5


def test_a_dry_run_says_what_each_record_would_become_and_writes_nothing(tenancy, writer):
    scope = tenancy.team.public_id
    held = mem0_item("held", "The staging database is rebuilt every Monday.")
    assert post(writer, scope, "mem0", {"results": [held]}).status_code == 200
    body = {
        "results": [
            mem0_item("a", "Builds are cached for a week."),
            mem0_item("b", f"The deploy key is {AWS_KEY}"),
            mem0_item("c", "   "),
            mem0_item("d", "The staging database is rebuilt every Monday."),
            mem0_item("e", "Builds are cached for a week."),
            mem0_item("f", "Fine.", metadata={"note": f"aws {AWS_KEY}"}),
        ]
    }
    before = Memory.objects.count()
    response = post(writer, scope, "mem0", body, "?dry_run=true")
    assert response.status_code == 200, response.json()
    answer = response.json()
    assert answer["dry_run"] is True
    assert (
        answer["records"],
        answer["written"],
        answer["absorbed"],
        answer["refused"],
        answer["skipped"],
    ) == (6, 1, 2, 2, 1)
    outcomes = {o["source_id"]: o for o in answer["outcomes"]}
    assert outcomes["b"]["outcome"] == "refuse" and outcomes["b"]["reason"]
    assert outcomes["c"]["outcome"] == "skip" and outcomes["c"]["reason"]
    assert outcomes["d"]["outcome"] == outcomes["e"]["outcome"] == "absorb"
    assert Memory.objects.count() == before
    # The import itself does what the dry run said; the absorbed texts keep their provenance.
    answer = post(writer, scope, "mem0", body).json()
    assert (answer["written"], answer["absorbed"], answer["refused"], answer["skipped"]) == (
        1,
        2,
        2,
        1,
    )
    assert Memory.objects.count() == before + 1
    assert not Memory.objects.filter(content__contains=AWS_KEY).exists()
    assert not Provenance.objects.filter(claims__icontains=AWS_KEY).exists()
    absorbed = Provenance.objects.filter(source_kind="import", absorbed=True)
    assert {row.claims["id"] for row in absorbed} == {"d", "e"}
    again = post(writer, scope, "mem0", body, "?dry_run=true").json()
    assert (again["written"], again["already"]) == (0, 3)


def test_a_text_in_another_language_is_stored_and_queued_with_its_original(tenancy, writer):
    answer = post(writer, tenancy.team.public_id, "mem0", [mem0_item("g", GERMAN)]).json()
    assert answer["written"] == 1
    memory = Memory.objects.get(scope=tenancy.team)
    assert memory.content_lang == "de" and memory.translation_status == "pending"


def test_an_import_stopped_half_way_goes_on_where_it_stopped(tenancy, writer):
    items = [mem0_item(f"r{i}", f"Runbook step {i} restarts worker pool {i}.") for i in range(6)]
    scope = tenancy.team.public_id
    assert post(writer, scope, "mem0", {"results": items[:3]}).json()["written"] == 3
    answer = post(writer, scope, "mem0", {"results": items}).json()
    assert (answer["written"], answer["already"]) == (3, 3)
    assert ImportedMemory.objects.filter(scope=tenancy.team).count() == 6


def test_mem0_history_gives_validity(tenancy, writer):
    history = [
        {
            "id": "h1",
            "memory_id": "x",
            "old_memory": None,
            "new_memory": "Port 8080.",
            "event": "ADD",
            "created_at": "2025-01-01T00:00:00+00:00",
            "updated_at": "2025-01-01T00:00:00+00:00",
            "is_deleted": False,
        },
        {
            "id": "h2",
            "memory_id": "x",
            "old_memory": "Port 8080.",
            "new_memory": "Port 9090.",
            "event": "UPDATE",
            "created_at": "2025-01-01T00:00:00+00:00",
            "updated_at": "2025-02-01T00:00:00+00:00",
            "is_deleted": False,
        },
    ]
    item = mem0_item("x", "The admin UI listens on port 9090.", history=history)
    item["history"][1]["old_memory"] = "The admin UI listens on port 8080."
    post(writer, tenancy.team.public_id, "mem0", [item])
    now = Memory.objects.get(content__contains="9090")
    before = Memory.objects.get(content__contains="8080")
    assert now.valid and now.valid_from.isoformat().startswith("2025-02-01")
    assert not before.valid and before.valid_until.isoformat().startswith("2025-02-01")
    assert before.valid_from.isoformat().startswith("2025-01-01")
    assert before.state == "forgotten" and "mem0" in before.forgotten_reason
    assert MemoryLink.objects.get().source == now


# Letta and supermemory.


def test_a_letta_agent_file_brings_its_blocks_and_passages(tenancy, writer):
    answer = post(writer, tenancy.team.public_id, "letta", letta_agent_file()).json()
    assert (answer["written"], answer["skipped"]) == (3, 1), answer
    kinds = dict(Memory.objects.filter(scope=tenancy.team).values_list("content", "kind_id"))
    assert kinds["Name: Ines. Works on the billing team."] == "preference"
    assert kinds["Answer briefly and cite the runbook."] == "convention"
    assert kinds["The billing service retries webhooks three times."] == "fact"
    answer = post(writer, tenancy.team.public_id, "letta", letta_passages()).json()
    assert (answer["written"], answer["skipped"]) == (1, 1)


def test_supermemory_versions_and_relations_become_validity_and_links(tenancy, writer):
    answer = post(writer, tenancy.team.public_id, "supermemory", supermemory_documents()).json()
    assert (answer["written"], answer["skipped"], answer["links"]) == (3, 1, 2), answer
    memories = by_claimed_id(tenancy.team)
    assert not memories["m1"].valid and memories["m2"].valid
    links = {(link.source_id, link.target_id, link.link_type) for link in MemoryLink.objects.all()}
    assert links == {
        (memories["m2"].id, memories["m1"].id, "relates_to"),
        (memories["m3"].id, memories["m2"].id, "caused_by"),
    }
    claims = Provenance.objects.get(memory=memories["m2"], source_kind="import").claims
    assert {"type": "derives", "target": "m9", "target_is_record": True} in claims["relations"]
    assert claims["attributes"]["document"]["title"] == "Team notes"


# Hostile and wrong files: a 400, nothing written.


def zipped() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        out.writestr("notes/a.md", "# A\n")
    return buffer.getvalue()


BAD_FILES = {
    "mem0 as letta": ("letta", json.dumps({"results": [mem0_item("a", "x y z")]}).encode()),
    "letta as mem0": ("mem0", json.dumps(letta_agent_file()).encode()),
    "passages as mem0": ("mem0", json.dumps(letta_passages()).encode()),
    "mem0 as supermemory": ("supermemory", json.dumps({"results": []}).encode()),
    "a zip": ("mem0", zipped()),
    "not json": ("mem0", b'{"results": [{"id": '),
    "deep": ("mem0", b'{"results": [' + b"[" * 100 + b"]" * 100 + b"]}"),
    "invalid utf-8": ("mem0", b'{"results": [{"id": "a", "memory": "caf\xe9 \xff"}]}'),
    "nul": ("mem0", b'{"results": [{"id": "a", "memory": "a\\u0000b"}]}'),
    "late wrong record": (
        "mem0",
        json.dumps({"results": [mem0_item("a", "Good text here."), {"text": "no"}]}).encode(),
    ),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_hostile_files_answer_400_and_write_nothing(tenancy, writer, name):
    system, data = BAD_FILES[name]
    response = post(writer, tenancy.team.public_id, system, data)
    assert response.status_code == 400, (name, response.content[:300])
    assert response.json()["error"]["details"]["body"]
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()


def test_an_oversized_file_or_text_past_the_budget_is_refused(tenancy, writer):
    body = {"results": [mem0_item("a", "word " * 400)]}
    with override_settings(IMPORT_MAX_BYTES=1024):
        response = post(writer, tenancy.team.public_id, "mem0", body)
    assert response.status_code == 400
    with override_settings(IMPORT_MAX_EMBED_CHARS=1000):
        response = post(writer, tenancy.team.public_id, "mem0", body)
    assert (
        response.status_code == 400
        and "manage.py import_from" in response.json()["error"]["message"]
    )
    assert not Memory.objects.exists()


def test_who_may_import_and_from_what(tenancy, api, kinds_seeded, tmp_path):
    scope = tenancy.team.public_id
    assert post(api(tenancy.reader), scope, "mem0", {"results": []}).status_code == 403
    assert post(api(tenancy.outsider), scope, "mem0", {"results": []}).status_code == 404
    assert post(api(tenancy.writer), scope, "memos", {"results": []}).status_code == 404
    with pytest.raises(CommandError):
        call_command(
            "import_from", "mem0", "/nonexistent.json", "--scope", scope, "--user", "reader"
        )


# The dashboard's import page.


def test_the_dashboard_page_runs_a_dry_run_then_the_import(tenancy, kinds_seeded, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(tenancy.writer)
    scope = tenancy.team.public_id
    page = client.get(f"/scopes/{scope}/")
    assert f"/scopes/{scope}/import-from/" in page.content.decode()
    body = json.dumps({"results": [mem0_item("a", "Snapshots are pruned after ten days.")]})

    def send(dry_run: bool):
        upload = SimpleUploadedFile("mem0.json", body.encode())
        data = {"system": "mem0", "file": upload, **({"dry_run": "on"} if dry_run else {})}
        return client.post(f"/scopes/{scope}/import-from/", data)

    response = send(dry_run=True)
    assert response.status_code == 200 and "Dry run" in response.content.decode()
    assert not Memory.objects.exists()
    response = send(dry_run=False)
    assert response.status_code == 200
    assert Memory.objects.get().content == "Snapshots are pruned after ten days."
    wrong = client.post(
        f"/scopes/{scope}/import-from/",
        {"system": "letta", "file": SimpleUploadedFile("mem0.json", body.encode())},
    )
    assert wrong.status_code == 400 and "not a file letta writes" in wrong.content.decode()
    client.force_login(tenancy.reader)
    assert client.get(f"/scopes/{scope}/import-from/").status_code == 403


def test_an_end_the_source_puts_in_the_future_leaves_the_memory_valid(tenancy, writer):
    entry = {
        "id": "f1",
        "memory": "The beta flag stays on until the launch.",
        "createdAt": "2025-04-01T08:00:00Z",
        "updatedAt": "2099-01-01T00:00:00Z",
        "isForgotten": True,
    }
    body = {"documents": [{"id": "d", "memoryEntries": [entry]}]}
    assert post(writer, tenancy.team.public_id, "supermemory", body).json()["written"] == 1
    memory = Memory.objects.get(scope=tenancy.team)
    assert memory.valid and memory.valid_until is None
    claims = Provenance.objects.get(memory=memory).claims
    assert claims["valid_until"].startswith("2099")
