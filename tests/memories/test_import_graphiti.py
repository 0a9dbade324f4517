"""The Graphiti reader: a graph built with graphiti-core's own pydantic models and dumped by
them (no database and no LLM needed to build one), read back record by record; hostile files."""

from __future__ import annotations

import io
import json

import pytest

from memories.portability.sources import graphiti
from memories.portability.sources.records import (
    BadSource,
    SkippedRecord,
    SourceEntity,
    SourceRecord,
    SourceRelation,
)
from tests.memories.graphiti_support import GROUP, T0, T1, T2
from tests.memories.graphiti_support import dump as _dump
from tests.memories.graphiti_support import graph as _graph


def _read(data: bytes) -> list[SourceRecord | SkippedRecord]:
    return list(graphiti.read(io.BytesIO(data)))


def test_a_graph_graphiti_core_dumped_record_by_record(tmp_path):
    graph = _graph()
    first, second = graph["episodes"]
    alice, billing, pg16, platform = graph["nodes"]
    runs_on, leads, retired = graph["edges"]
    path = tmp_path / "graph.json"
    path.write_bytes(_dump(graph))
    records = list(graphiti.read(path))
    assert records == _read(_dump(graph))
    by_id = {record.source_id: record for record in records}
    assert list(by_id) == [
        f"episode:{first.uuid}",
        f"episode:{second.uuid}",
        f"node:{alice.uuid}",
        f"node:{billing.uuid}",
        f"node:{pg16.uuid}",
        f"node:{platform.uuid}",
        f"edge:{runs_on.uuid}",
        f"edge:{leads.uuid}",
        f"edge:{retired.uuid}",
    ]

    fact = by_id[f"edge:{runs_on.uuid}"]
    assert fact.system == "graphiti"
    assert (fact.content, fact.kind) == (runs_on.fact, "fact")
    assert (fact.created_at, fact.valid_from, fact.valid_until) == (T0, T0, T2)
    assert fact.entities == (
        SourceEntity("billing service", "service"),
        SourceEntity("Postgres 16", ""),
    )
    assert fact.relations == (
        SourceRelation("RUNS_ON", "Postgres 16", target_is_record=False),
        SourceRelation("extracted_from", f"episode:{first.uuid}"),
    )
    assert fact.attributes["uuid"] == runs_on.uuid
    assert fact.attributes["group_id"] == GROUP
    assert fact.attributes["episodes"] == [first.uuid]
    assert fact.attributes["source_node_uuid"] == billing.uuid
    assert fact.attributes["attributes"] == {"confidence": 0.9}

    lead = by_id[f"edge:{leads.uuid}"]
    assert (lead.valid_from, lead.valid_until) == (T1, None)
    assert lead.entities == (SourceEntity("Alice", "person"), SourceEntity("platform team", "team"))
    # An episode missing from the file is kept in the attributes, not linked.
    assert lead.relations == (
        SourceRelation("LEADS", "platform team", target_is_record=False),
        SourceRelation("extracted_from", f"episode:{second.uuid}"),
    )
    assert lead.attributes["episodes"] == [second.uuid, "an-episode-not-in-the-file"]

    # Retired by Graphiti without an invalid_at: valid until it expired.
    assert by_id[f"edge:{retired.uuid}"].valid_until == T1

    episode = by_id[f"episode:{first.uuid}"]
    assert (episode.content, episode.kind, episode.created_at) == (first.content, "episode", T0)
    assert episode.valid_from is None and episode.entities == ()
    assert episode.attributes["source"] == "message"
    assert episode.attributes["source_description"] == "team chat"
    assert episode.attributes["valid_at"] == "2024-03-01T09:30:00Z"
    assert episode.attributes["name"] == "standup-1"

    summary = by_id[f"node:{alice.uuid}"]
    assert (summary.content, summary.kind) == (alice.summary, "fact")
    assert summary.entities == (SourceEntity("Alice", "person"),)
    assert summary.attributes["labels"] == ["Entity", "Person"]
    assert summary.attributes["attributes"] == {"role": "lead"}
    assert isinstance(by_id[f"node:{billing.uuid}"], SkippedRecord)


def test_the_file_is_what_graphiti_core_reads_back():
    """The file's items validate as graphiti-core's own models: the format is its own."""
    from graphiti_core.edges import EntityEdge
    from graphiti_core.nodes import EntityNode, EpisodicNode

    dumped = json.loads(_dump(_graph()))
    models = {"episodes": EpisodicNode, "nodes": EntityNode, "edges": EntityEdge}
    for section, model in models.items():
        for item in dumped[section]:
            assert model.model_validate(item).model_dump(mode="json") == item


def test_sections_in_any_order_and_embeddings_left_out():
    graph = _graph()
    dumped = json.loads(_dump(graph))
    dumped["edges"][0]["fact_embedding"] = [0.1] * 8
    dumped["edges"][0]["attributes"]["name_embedding"] = [0.2] * 8
    reordered = {"edges": dumped["edges"], "nodes": dumped["nodes"]}  # no episodes at all
    records = _read(json.dumps(reordered).encode())
    edges = [r for r in records if r.source_id.startswith("edge:")]
    assert [r.entities[0].name for r in edges] == ["billing service", "Alice", "Alice"]
    assert "fact_embedding" not in edges[0].attributes
    assert edges[0].attributes["attributes"] == {"confidence": 0.9}
    # No episodes in the file: no relation to one.
    assert all(rel.type != "extracted_from" for r in edges for rel in r.relations)


def test_an_edge_whose_nodes_are_missing_keeps_its_fact():
    (edge,) = _graph()["edges"][:1]
    (record,) = _read(json.dumps({"edges": [edge.model_dump(mode="json")]}).encode())
    assert record.content == edge.fact and record.entities == () and record.relations == ()
    assert record.attributes["target_node_uuid"] == edge.target_node_uuid


def test_the_file_is_checked_whole_before_the_first_record():
    dumped = json.loads(_dump(_graph()))
    dumped["edges"][2]["valid_at"] = "last tuesday"
    # read() itself refuses: nothing is yielded, so nothing can be written.
    with pytest.raises(BadSource, match=r"edges\[2\]: valid_at is not an ISO 8601 time"):
        graphiti.read(io.BytesIO(json.dumps(dumped).encode()))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        # mem0's get_all() answer is not a Graphiti export.
        (
            b'{"results": [{"id": "m1", "memory": "Likes tea", "user_id": "alice"}]}',
            "none of episodes, nodes, edges",
        ),
        (b'[{"uuid": "x"}]', "not a JSON object"),
        (b'"edges"', "not a JSON object"),
        (b'{"edges": {"uuid": "x"}}', "edges is not a list"),
        (b'{"edges": ["a fact"]}', r"edges\[0\] is not an object"),
        (b'{"edges": [{"uuid": "x", "fact": "f"}]}', r"edges\[0\] has no source_node_uuid"),
        (b'{"nodes": [{"uuid": "x", "name": 3}]}', r"nodes\[0\] has no name"),
        (b'{"episodes": [{"uuid": "x"}]}', r"episodes\[0\] has no content"),
        (b'{"nodes": [{"uuid": "x", "name": "n", "labels": "Person"}]}', "labels"),
        (b'{"edges": [', "not JSON"),
        (b"", "not JSON"),
        (b'{"episodes": [{"uuid": "x", "content": "caf\xe9"}]}', "not UTF-8"),
        (
            b'{"nodes": [{"uuid": "x", "name": "n", "attributes": '
            + b'{"a": ' * 40
            + b"1"
            + b"}" * 40
            + b"}]}",
            "nested too deep",
        ),
    ],
)
def test_hostile_and_wrong_files_are_refused(data, message):
    with pytest.raises(BadSource, match=message):
        graphiti.read(io.BytesIO(data))


def test_a_missing_path_is_refused(tmp_path):
    with pytest.raises(BadSource, match="cannot be read"):
        graphiti.read(tmp_path / "missing.json")
