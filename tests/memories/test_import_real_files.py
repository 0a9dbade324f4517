"""Imports of files Letta and supermemory wrote themselves (issue 43): neither runs here, so the
files come from their own repositories (tests/data/letta/SOURCES.txt,
tests/data/supermemory/SOURCES.txt). Each is posted to the REST route as it is and compared
record by record with what the file holds, read here with json, not with the reader."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memories.models import Memory, Provenance

DATA = Path(__file__).resolve().parents[1] / "data"
LETTA_KINDS = {"human": "preference", "persona": "convention"}  # docs/import.md's table


@pytest.fixture
def writer(tenancy, api, kinds_seeded):
    return api(tenancy.writer)


def post_file(client, scope_id: str, system: str, path: Path, query: str = ""):
    return client.post(
        f"/api/v1/scopes/{scope_id}/import-from/{system}{query}",
        path.read_bytes(),
        content_type="application/json",
    )


def imported(scope) -> list[tuple[Memory, dict]]:
    rows = Provenance.objects.filter(memory__scope=scope, source_kind="import")
    return [(row.memory, row.claims) for row in rows.select_related("memory")]


def same_time(claimed: str | None, written: str | None) -> bool:
    """Both absent, or the same instant (a time without a zone read as UTC)."""
    if claimed is None or written is None:
        return claimed is written

    def parsed(value: str) -> datetime:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))

    a, b = parsed(claimed), parsed(written)
    return a.replace(tzinfo=None) == b.replace(tzinfo=None) and (a.utcoffset() or 0) == (
        b.utcoffset() or 0
    )


# Letta


def letta_blocks(path: Path) -> list[dict]:
    """The core-memory blocks an agent file holds: `blocks` (AgentFileSchema) or `core_memory`
    (the older single-agent file), through a second decode when the file is a JSON string."""
    held = json.loads(path.read_text())
    if isinstance(held, str):
        held = json.loads(held)
    return held.get("blocks") or held.get("core_memory") or []


@pytest.mark.parametrize(
    "name",
    [
        "test_basic_agent_with_blocks_tools_messages_v2.af",
        "customer_service.af",
        "memgpt_agent.af",
    ],
)
def test_a_letta_agent_file_comes_in_block_by_block(tenancy, writer, name):
    path = DATA / "letta" / name
    blocks = [b for b in letta_blocks(path) if (b.get("value") or "").strip()]
    assert blocks, "the file holds core-memory blocks"
    response = post_file(writer, tenancy.team.public_id, "letta", path)
    assert response.status_code == 200, response.content
    assert response.json()["written"] == len(blocks), response.json()
    by_label = {claims["attributes"]["label"]: (m, claims) for m, claims in imported(tenancy.team)}
    assert set(by_label) == {b["label"] for b in blocks}
    for block in blocks:
        memory, claims = by_label[block["label"]]
        assert memory.content.strip() == block["value"].strip()
        assert memory.kind_id == LETTA_KINDS.get(block["label"], "fact")
        assert claims["system"] == "letta"
        assert claims["attributes"].get("block_id") == block.get("id")
        assert claims["attributes"].get("limit") == block.get("limit")
        assert same_time(block.get("created_at"), claims.get("created_at"))
        assert same_time(block.get("updated_at"), claims.get("updated_at"))
    # A second import of the same file writes nothing.
    again = post_file(writer, tenancy.team.public_id, "letta", path).json()
    assert (again["written"], again["already"]) == (0, len(blocks)), again


def test_two_letta_agent_files_keep_each_others_blocks(tenancy, writer):
    """Every agent file numbers its blocks from `block-0`: the second agent's blocks are its
    own, not the first's imported again."""
    first = DATA / "letta" / "test_basic_agent_with_blocks_tools_messages_v2.af"
    second = DATA / "letta" / "memgpt_agent.af"
    assert {b["id"] for b in letta_blocks(second)} <= {b["id"] for b in letta_blocks(first)}
    scope = tenancy.team.public_id
    assert post_file(writer, scope, "letta", first).json()["written"] == 3
    answer = post_file(writer, scope, "letta", second).json()
    assert (answer["written"], answer["already"]) == (2, 0), answer
    assert Memory.objects.filter(scope=tenancy.team).count() == 5


# supermemory


def supermemory_memories(path: Path) -> list[tuple[dict, dict]]:
    """(memory, its document) for each memory the file holds: under `documents[].memoryEntries`,
    or a top-level `memories` list of memories (those with a `memory` text)."""
    held = json.loads(path.read_text())
    pairs = [(m, d) for d in held.get("documents", []) for m in d["memoryEntries"]]
    pairs += [(m, {}) for m in held.get("memories", []) if "memory" in m]
    return pairs


@pytest.mark.parametrize(
    "name", ["documents-with-memories.json", "memories-create.json", "inferred-memories.json"]
)
def test_a_supermemory_answer_comes_in_memory_by_memory(tenancy, writer, name):
    path = DATA / "supermemory" / name
    held = supermemory_memories(path)
    assert held
    response = post_file(writer, tenancy.team.public_id, "supermemory", path)
    assert response.status_code == 200, response.content
    assert response.json()["written"] == len(held), response.json()
    by_id = {claims["id"]: (m, claims) for m, claims in imported(tenancy.team)}
    assert set(by_id) == {m["id"] for m, _d in held}
    for item, document in held:
        memory, claims = by_id[item["id"]]
        assert memory.content == item["memory"]
        assert memory.kind_id == ("preference" if item.get("isStatic") else "fact")
        assert memory.valid  # every one is the latest, none forgotten
        assert claims["system"] == "supermemory"
        assert same_time(item["createdAt"], claims["created_at"])
        assert same_time(item.get("updatedAt"), claims.get("updated_at"))
        assert memory.valid_from == datetime.fromisoformat(item["createdAt"].replace("Z", "+00:00"))
        if document:
            assert claims["attributes"]["document"]["id"] == document["id"]
            assert claims["attributes"]["document"]["title"] == document["title"]
        if "spaceId" in item:
            assert claims["attributes"]["spaceId"] == item["spaceId"]
    again = post_file(writer, tenancy.team.public_id, "supermemory", path).json()
    assert (again["written"], again["already"]) == (0, len(held)), again


def test_the_supermemory_documents_list_is_read_as_documents_without_memories(tenancy, writer):
    """The documents list names its documents `memories` and holds no memory text: each is
    skipped with its reason, the file is not refused."""
    path = DATA / "supermemory" / "documents-list.json"
    documents = json.loads(path.read_text())["memories"]
    response = post_file(writer, tenancy.team.public_id, "supermemory", path, "?dry_run=true")
    assert response.status_code == 200, response.content
    answer = response.json()
    assert (answer["written"], answer["skipped"]) == (0, len(documents)), answer
    outcomes = {o["source_id"]: o for o in answer["outcomes"]}
    for document in documents:
        assert outcomes[document["id"]]["outcome"] == "skip"
        assert outcomes[document["id"]]["reason"]


@pytest.mark.parametrize(
    "body",
    [
        json.dumps("not an agent file"),
        json.dumps(json.dumps({"results": []})),
        json.dumps(json.dumps([{"id": "p"}]))[:-3] + '\\ud800"',
    ],
    ids=["a string", "a mem0 file inside", "a lone surrogate"],
)
def test_a_json_string_that_holds_no_agent_file_is_refused_whole(tenancy, writer, body):
    response = writer.post(
        f"/api/v1/scopes/{tenancy.team.public_id}/import-from/letta",
        body.encode(),
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert not Memory.objects.filter(scope=tenancy.team).exists()
