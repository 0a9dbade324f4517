"""What the capture tests share: a Claude Code transcript rendered as a chunk, and helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings

from memories.models import Chunk

TRANSCRIPTS = Path(settings.BASE_DIR) / "tests" / "data" / "transcripts"


def claude_code_chunk(name: str = "claude-code-session.jsonl") -> str:
    """User and assistant text of a Claude Code session, one turn per paragraph (tool calls,
    tool results, thinking and summaries left out), as the watcher sends it."""
    turns = []
    for line in (TRANSCRIPTS / name).read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") not in ("user", "assistant"):
            continue
        content = entry["message"]["content"]
        if isinstance(content, str):
            texts = [content]
        else:
            texts = [block["text"] for block in content if block.get("type") == "text"]
        for text in texts:
            turns.append(f"{entry['message']['role']}: {text}")
    return "\n\n".join(turns)


def codex_chunk(name: str = "codex-rollout.jsonl") -> str:
    """User and assistant text of a Codex rollout (reasoning, function calls and their output,
    and the environment context left out), as the watcher sends it."""
    turns = []
    for line in (TRANSCRIPTS / name).read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        payload = entry.get("payload", {})
        if entry.get("type") != "response_item" or payload.get("type") != "message":
            continue
        for block in payload.get("content", []):
            text = block.get("text", "")
            if block.get("type") in ("input_text", "output_text") and not text.startswith("<"):
                turns.append(f"{payload['role']}: {text}")
    return "\n\n".join(turns)


def candidate(content: str, kind: str, confidence: float, evidence: str) -> dict[str, Any]:
    return {"content": content, "kind": kind, "confidence": confidence, "evidence": evidence}


# A decision the transcript fixtures state, and the span it rests on.
EVIDENCE = "we never call Stripe inside a request handler"
DECISION = candidate(
    "The shop never calls Stripe inside a request handler; webhooks go through the "
    "`billing_events` queue.",
    "decision",
    0.95,
    EVIDENCE,
)


def ingest(api_client, content: str, **extra):
    body = {"content": content, "source_kind": "transcript", "client": "claude-code", **extra}
    return api_client.post("/api/v1/ingest", body, format="json")


def chunk_of(response) -> Chunk:
    return Chunk.objects.get(public_id=response.json()["chunk"]["id"])


def run(api_client, text, capture, **extra) -> Chunk:
    """Ingest, then run the queued extraction inline."""
    with capture(execute=True):
        response = ingest(api_client, text, **extra)
    assert response.status_code == 202, response.json()
    return chunk_of(response)
