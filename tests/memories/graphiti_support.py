"""A small graph built with graphiti-core's own pydantic models (no database, no LLM needed
to build one) and dumped by them: the Graphiti file the import tests read."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from graphiti_core.edges import EntityEdge
from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode

GROUP = "team-notes"
T0 = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
T1 = datetime(2024, 6, 1, tzinfo=UTC)
T2 = datetime(2024, 9, 15, 12, 0, tzinfo=UTC)


def graph():
    """A small graph as graphiti-core's models hold it after ingesting two episodes."""
    first = EpisodicNode(
        name="standup-1",
        group_id=GROUP,
        source=EpisodeType.message,
        source_description="team chat",
        content="Alice: we moved the billing service to Postgres 16 last week.",
        valid_at=T0,
        created_at=T0,
    )
    second = EpisodicNode(
        name="standup-2",
        group_id=GROUP,
        source=EpisodeType.text,
        source_description="meeting notes",
        content="Billing now runs on Postgres 17; Alice leads the platform team.",
        valid_at=T2,
        created_at=T2,
    )
    alice = EntityNode(
        name="Alice",
        group_id=GROUP,
        labels=["Entity", "Person"],
        summary="Alice leads the platform team and owns billing's database.",
        attributes={"role": "lead"},
        created_at=T0,
    )
    billing = EntityNode(name="billing service", group_id=GROUP, labels=["Entity", "Service"])
    pg16 = EntityNode(name="Postgres 16", group_id=GROUP, labels=["Entity"], created_at=T0)
    platform = EntityNode(name="platform team", group_id=GROUP, labels=["Entity", "Team"])
    runs_on = EntityEdge(
        group_id=GROUP,
        source_node_uuid=billing.uuid,
        target_node_uuid=pg16.uuid,
        created_at=T0,
        name="RUNS_ON",
        fact="The billing service runs on Postgres 16.",
        episodes=[first.uuid],
        valid_at=T0,
        invalid_at=T2,
        expired_at=T2,
        attributes={"confidence": 0.9},
    )
    leads = EntityEdge(
        group_id=GROUP,
        source_node_uuid=alice.uuid,
        target_node_uuid=platform.uuid,
        created_at=T2,
        name="LEADS",
        fact="Alice leads the platform team.",
        episodes=[second.uuid, "an-episode-not-in-the-file"],
        valid_at=T1,
    )
    retired = EntityEdge(
        group_id=GROUP,
        source_node_uuid=alice.uuid,
        target_node_uuid=billing.uuid,
        created_at=T0,
        name="OWNS",
        fact="Alice owns the billing service.",
        episodes=[first.uuid],
        expired_at=T1,
    )
    return {
        "episodes": [first, second],
        "nodes": [alice, billing, pg16, platform],
        "edges": [runs_on, leads, retired],
    }


def dump(graph) -> bytes:
    return json.dumps(
        {key: [item.model_dump(mode="json") for item in items] for key, items in graph.items()}
    ).encode()
