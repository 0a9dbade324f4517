"""Imports of basic-memory folders and Graphiti graphs end to end (issue 43): through the REST
route (a zip of the folder, the JSON graphiti-core's models dumped) and `manage.py
import_from` (the folder's path, the file's path), each record compared with the memory it
became: content, kind, validity, entities, links; a second import writes nothing; hostile
files answer 400 and write nothing."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.models import EntityMention, ImportedMemory, Memory, MemoryLink, Provenance
from memories.portability.sources import basic_memory, graphiti
from memories.portability.sources.records import SourceRecord
from tests.memories.graphiti_support import T0, T1, T2
from tests.memories.graphiti_support import dump as _dump
from tests.memories.graphiti_support import graph as _graph

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "basic_memory"


@pytest.fixture
def writer(tenancy, api, kinds_seeded):
    return api(tenancy.writer)


def post(client, scope_id: str, system: str, data: bytes, query: str = "", zipped=False):
    return client.post(
        f"/api/v1/scopes/{scope_id}/import-from/{system}{query}",
        data,
        content_type="application/zip" if zipped else "application/json",
    )


def folder_zip(directory: Path, extra: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.writestr(path.relative_to(directory).as_posix(), path.read_bytes())
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def imported(scope) -> dict[str, Memory]:
    """The scope's memories by the source id their import claims."""
    rows = Provenance.objects.filter(memory__scope=scope, source_kind="import")
    return {row.claims["id"]: row.memory for row in rows.select_related("memory")}


def entity_names(memory: Memory) -> set[str]:
    mentions = EntityMention.objects.filter(memory=memory).select_related("entity")
    return {mention.entity.name for mention in mentions}


def compare(records: list[SourceRecord], scope) -> dict[str, Memory]:
    """Each record against the memory it became."""
    memories = imported(scope)
    for record in records:
        memory = memories[record.source_id]
        assert record.content in (memory.content, memory.content_original), record.source_id
        assert memory.kind_id == record.kind, record.source_id
        claims = Provenance.objects.get(memory=memory, source_kind="import").claims
        assert claims["system"] == record.system and claims["id"] == record.source_id
        names = {e.name for e in record.entities}
        names |= {r.target for r in record.relations if not r.target_is_record}
        assert names <= entity_names(memory), (record.source_id, names, entity_names(memory))
        if record.valid_until is not None:
            assert not memory.valid and memory.valid_until == record.valid_until
        else:
            assert memory.valid
        if record.valid_from is not None:
            assert memory.valid_from == record.valid_from
    return memories


# basic-memory


def test_a_basic_memory_folder_through_rest_record_by_record(tenancy, writer):
    scope = tenancy.team.public_id
    body = folder_zip(FIXTURES)
    records = [r for r in basic_memory.read(io.BytesIO(body)) if isinstance(r, SourceRecord)]
    dry = post(writer, scope, "basic-memory", body, "?dry_run=true", zipped=True)
    assert dry.status_code == 200, dry.json()
    assert not Memory.objects.exists()
    answer = post(writer, scope, "basic-memory", body, zipped=True).json()
    assert answer["records"] == dry.json()["records"]
    assert (
        answer["written"] + answer["absorbed"]
        == len(records)
        == dry.json()["written"] + dry.json()["absorbed"]
    )
    assert answer["skipped"] == 2  # the empty note, SOURCES.txt
    memories = compare(records, tenancy.team)
    ada = memories["people/ada-lovelace#text"]
    assert "Ada Lovelace" in entity_names(ada) and "Charles Babbage" in entity_names(ada)
    coffee = [r for r in records if r.attributes["permalink"] == "coffee-brewing-methods"]
    assert memories[coffee[2].source_id].kind_id == "preference"
    # A second import of the same folder writes nothing.
    again = post(writer, scope, "basic-memory", body, zipped=True).json()
    assert (again["written"], again["already"]) == (0, len(records))


def test_a_basic_memory_directory_through_the_command(tenancy, kinds_seeded, tmp_path):
    folder = tmp_path / "project"
    shutil.copytree(FIXTURES, folder)
    records = [r for r in basic_memory.read(folder) if isinstance(r, SourceRecord)]
    scope = tenancy.team.public_id
    out = io.StringIO()
    args = ("import_from", "basic-memory", str(folder), "--scope", scope, "--user", "writer")
    call_command(*args, stdout=out)
    assert f"records {len(records) + 2}:" in out.getvalue(), out.getvalue()
    compare(records, tenancy.team)
    out = io.StringIO()
    call_command(*args, stdout=out)
    assert "written 0" in out.getvalue() and f"already there {len(records)}" in out.getvalue()
    # A link out of the folder refuses the folder whole.
    os.symlink(tmp_path / "elsewhere.md", folder / "link.md")
    with pytest.raises(CommandError, match="link.md is a symbolic link"):
        call_command(*args, stdout=io.StringIO())


def test_a_secret_in_a_note_refuses_that_record_only(tenancy, writer):
    key = "AKIA" + "QWERTYUIOPASDFGH"
    note = f"# Deploys\n\n- [fact] The deploy key is {key}\n- [fact] Deploys run at noon.\n"
    body = folder_zip(FIXTURES / "edge-cases", {"deploys.md": note.encode()})
    answer = post(writer, tenancy.team.public_id, "basic-memory", body, zipped=True).json()
    assert answer["refused"] == 1 and answer["written"] >= 1, answer
    assert Memory.objects.filter(content="Deploys run at noon.").exists()
    assert not Memory.objects.filter(content__contains=key).exists()
    assert not Provenance.objects.filter(claims__icontains=key).exists()


BAD_FOLDERS = {
    "traversal": {"../../etc/cron.d/x.md": b"- [fact] out\n"},
    "absolute": {"/etc/x.md": b"- [fact] out\n"},
    "invalid utf-8": {"notes/b.md": b"- [fact] caf\xe9\n"},
    "yaml alias": {"c.md": b"---\na: &x [1]\nb: *x\n---\n- [fact] c\n"},
}


@pytest.mark.parametrize("name", BAD_FOLDERS)
def test_hostile_folders_answer_400_and_write_nothing(tenancy, writer, name):
    body = folder_zip(FIXTURES, BAD_FOLDERS[name])
    response = post(writer, tenancy.team.public_id, "basic-memory", body, zipped=True)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["details"]["body"]
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()


# Graphiti


def test_a_graphiti_graph_through_rest_record_by_record(tenancy, writer):
    graph = _graph()
    body = _dump(graph)
    records = [r for r in graphiti.read(io.BytesIO(body)) if isinstance(r, SourceRecord)]
    scope = tenancy.team.public_id
    answer = post(writer, scope, "graphiti", body).json()
    assert (answer["written"], answer["skipped"]) == (len(records), 3), answer
    memories = compare(records, tenancy.team)
    runs_on, leads, retired = graph["edges"]
    first, second = graph["episodes"]
    fact = memories[f"edge:{runs_on.uuid}"]
    assert (fact.valid_from, fact.valid_until, fact.valid) == (T0, T2, False)
    assert memories[f"edge:{leads.uuid}"].valid_from == T1
    assert memories[f"edge:{leads.uuid}"].valid
    assert memories[f"edge:{retired.uuid}"].valid_until == T1
    assert memories[f"episode:{first.uuid}"].kind_id == "episode"
    # Each fact is linked to the episodes it was drawn from.
    links = {(link.source_id, link.target_id) for link in MemoryLink.objects.all()}
    assert (fact.id, memories[f"episode:{first.uuid}"].id) in links
    assert (memories[f"edge:{leads.uuid}"].id, memories[f"episode:{second.uuid}"].id) in links
    claims = Provenance.objects.get(memory=fact, source_kind="import").claims
    assert claims["attributes"]["uuid"] == runs_on.uuid
    assert claims["attributes"]["group_id"] == "team-notes"
    assert claims["valid_from"].startswith("2024-03-01T09:30")


def test_a_graphiti_file_through_the_command(tenancy, kinds_seeded, tmp_path):
    path = tmp_path / "graph.json"
    path.write_bytes(_dump(_graph()))
    records = [r for r in graphiti.read(path) if isinstance(r, SourceRecord)]
    scope = tenancy.team.public_id
    args = ("import_from", "graphiti", str(path), "--scope", scope, "--user", "writer")
    out = io.StringIO()
    call_command(*args, "--dry-run", stdout=out)
    assert "dry run" in out.getvalue() and not Memory.objects.exists()
    call_command(*args, stdout=io.StringIO())
    compare(records, tenancy.team)
    out = io.StringIO()
    call_command(*args, stdout=out)
    assert "written 0" in out.getvalue() and f"already there {len(records)}" in out.getvalue()


BAD_GRAPHS = {
    "a mem0 answer": json.dumps({"results": [{"id": "m1", "memory": "Likes tea"}]}).encode(),
    "not json": b'{"edges": [',
    "invalid utf-8": b'{"episodes": [{"uuid": "x", "content": "caf\xe9"}]}',
    "deep": b'{"nodes": [{"uuid": "x", "name": "n", "attributes": '
    + b'{"a": ' * 40
    + b"1"
    + b"}" * 41
    + b"]}",
    "a late bad time": json.dumps(
        {
            "edges": [
                {"uuid": "a", "source_node_uuid": "n", "target_node_uuid": "m", "fact": "Fine."},
                {
                    "uuid": "b",
                    "source_node_uuid": "n",
                    "target_node_uuid": "m",
                    "fact": "F.",
                    "valid_at": "yesterday",
                },
            ]
        }
    ).encode(),
}


@pytest.mark.parametrize("name", BAD_GRAPHS)
def test_hostile_graphs_answer_400_and_write_nothing(tenancy, writer, name):
    response = post(writer, tenancy.team.public_id, "graphiti", BAD_GRAPHS[name])
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["details"]["body"]
    assert not Memory.objects.exists() and not ImportedMemory.objects.exists()


def test_who_may_import_notes_and_graphs(tenancy, api, kinds_seeded):
    scope = tenancy.team.public_id
    body = _dump(_graph())
    assert post(api(tenancy.reader), scope, "graphiti", body).status_code == 403
    assert post(api(tenancy.outsider), scope, "graphiti", body).status_code == 404
    zipped = folder_zip(FIXTURES)
    assert post(api(tenancy.reader), scope, "basic-memory", zipped, zipped=True).status_code == 403
    assert (
        post(api(tenancy.outsider), scope, "basic-memory", zipped, zipped=True).status_code == 404
    )
    assert not Memory.objects.exists()


def test_the_dashboard_page_takes_a_zip_of_notes_and_a_graph(tenancy, kinds_seeded, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(tenancy.writer)
    url = f"/scopes/{tenancy.team.public_id}/import-from/"
    notes = SimpleUploadedFile("project.zip", folder_zip(FIXTURES / "people"))
    response = client.post(url, {"system": "basic-memory", "file": notes})
    assert response.status_code == 200
    assert Memory.objects.filter(content="Was the daughter of poet Lord Byron").exists()
    graph = SimpleUploadedFile("graph.json", _dump(_graph()))
    response = client.post(url, {"system": "graphiti", "file": graph, "dry_run": "on"})
    assert response.status_code == 200 and "Dry run" in response.content.decode()
    wrong = SimpleUploadedFile("graph.json", _dump(_graph()))
    response = client.post(url, {"system": "basic-memory", "file": wrong})
    assert response.status_code == 400 and "not a zip" in response.content.decode()
