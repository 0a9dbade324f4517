"""Known activity, capture, hygiene and spend rows, folded: what the insights tests check every
figure against. Memories are stored without embeddings (the insights read no vectors)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from memories import spend
from memories.canonical.content import content_hash
from memories.insights.fold import insights_fold
from memories.models import (
    ActivityLog,
    Chunk,
    ChunkStatus,
    Conflict,
    ConflictStatus,
    LlmPath,
    LlmSpend,
    Memory,
    Provenance,
)
from scopes.models import Scope

GERMAN_QUERY = "Wie setze ich die Datenbank der Testumgebung jeden Montag zurück?"
ENGLISH_QUERY = "where does the vpn configuration file live"


def stored(scope, content: str, *, author: str = "human", age_days: int = 0, **fields) -> Memory:
    memory = Memory.objects.create(
        scope=scope,
        kind_id="fact",
        content=content,
        content_hash=content_hash(content),
        author_kind=author,
        **fields,
    )
    if age_days:
        Memory.objects.filter(pk=memory.pk).update(
            created_at=timezone.now() - timedelta(days=age_days)
        )
    return memory


def searched(user, scopes=()) -> list[int]:
    """The scope ids a read of `user` (a session) searches now, as recall records them."""
    readable = Scope.objects.filter(memberships__user=user)
    if scopes:
        readable = readable.filter(public_id__in=list(scopes))
    return sorted(readable.values_list("id", flat=True))


def activity(user, operation: str, *, results=(), scopes=(), ago=timedelta(0), **fields):
    fields.setdefault("searched_scopes", searched(user, scopes))
    return ActivityLog.objects.create(
        surface="mcp",
        user=user,
        operation=operation,
        scopes=list(scopes),
        results=[{"id": memory.public_id, "score": 0.5} for memory in results],
        latency_ms=3.0,
        outcome=fields.pop("outcome", "hit" if results else "empty"),
        created_at=timezone.now() - ago,
        **fields,
    )


@dataclass
class Seeded:
    old_unused: Memory
    old_used: Memory
    by_agent: Memory
    by_capture: Memory
    pending: Memory
    failed: Memory


def seed(tenancy) -> Seeded:
    team, owner, writer, reader = tenancy.team, tenancy.owner, tenancy.writer, tenancy.reader
    team_id = [team.public_id]
    old_unused = stored(team, "The legacy cron host is cron-01.", age_days=100)
    old_used = stored(team, "Deploys go out on Tuesdays.", age_days=100)
    by_agent = stored(team, "The API rate limit is 600 requests a minute.", author="agent")
    by_capture = stored(team, "The rate limit of the API is 500 a minute.", author="capture")
    pending = stored(team, "Die Tests laufen nachts.", translation_status="pending")
    failed = stored(team, "Les tests tournent la nuit.", translation_status="failed")

    # Today: a recall, a context over every scope, a briefing, two empty recalls, an error.
    activity(
        writer,
        "recall",
        results=[by_agent, old_used],
        scopes=team_id,
        tokens=40,
        conversation_id="conv-1",
        client_name="claude-code",
        query="rate limit",
    )
    activity(
        owner,
        "build_context",
        results=[old_used],
        tokens=25,
        conversation_id="conv-2",
        client_name="codex",
        query="deploys",
    )
    activity(
        owner,
        "briefing",
        results=[by_agent],
        scopes=team_id,
        tokens=10,
        conversation_id="conv-2",
        client_name="codex",
    )
    activity(reader, "recall", scopes=team_id, query=GERMAN_QUERY, ago=timedelta(minutes=2))
    activity(writer, "recall", query=ENGLISH_QUERY, ago=timedelta(minutes=1))
    activity(writer, "recall", scopes=team_id, outcome="error", error_code="validation_failed")
    # Three days ago: one recall.
    activity(writer, "recall", results=[old_used], scopes=team_id, tokens=15,
             ago=timedelta(days=3))  # fmt: skip
    # An outsider's recall of nothing counts nowhere in the team.
    activity(tenancy.outsider, "recall", query="outsider's own question")

    Provenance.objects.create(
        memory=by_capture, source_kind="extraction", conversation_id="conv-2", created_by=owner
    )
    now = timezone.now()
    chunk = {"user": writer, "scope": team, "source_kind": "transcript", "content": "x"}
    Chunk.objects.create(**chunk, chunk_hash="c1", status=ChunkStatus.EXTRACTED, extracted_at=now,
                         kept=2, dropped={"low_confidence": 1})  # fmt: skip
    Chunk.objects.create(**chunk, chunk_hash="c2", status=ChunkStatus.EXTRACTED, extracted_at=now,
                         kept=0, dropped={"low_confidence": 2, "no_evidence": 1})  # fmt: skip
    Chunk.objects.create(**chunk, chunk_hash="c3", status=ChunkStatus.FAILED)
    Chunk.objects.create(**chunk, chunk_hash="c4", status=ChunkStatus.PENDING)

    def pair(a, b, status, **fields):
        first, second = sorted((a, b), key=lambda memory: memory.pk)
        return Conflict.objects.create(
            scope=team, memory_a=first, memory_b=second, status=status, **fields
        )

    pair(by_agent, by_capture, ConflictStatus.OPEN, created_at=now - timedelta(days=2))
    pair(old_unused, old_used, ConflictStatus.PENDING)
    pair(old_unused, by_agent, ConflictStatus.FAILED)

    today = spend.today()
    LlmSpend.objects.create(scope=team, path=LlmPath.JUDGE, day=today, tokens=1200, calls=2)
    LlmSpend.objects.create(
        scope=team, path=LlmPath.TRANSLATION, day=today - timedelta(days=3), tokens=500, calls=1
    )
    insights_fold(days=7)
    return Seeded(old_unused, old_used, by_agent, by_capture, pending, failed)
