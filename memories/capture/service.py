"""Extraction of one chunk, off the request path: a job of the engine (`memories.jobs`: claim
and lease, attempts, backoff, the sweeper), declared here.

1. before any call: skip a chunk whose token was revoked meanwhile, or with too little prose;
   defer one whose user spent the day's token budget to the next UTC day (without a key the
   chunk waits, `waiting_for_key`, without an attempt);
2. the call: one Messages API call outside any transaction;
3. apply: the gates, then every kept candidate through `remember()` (guard, dedup, language
   detection, canonicalization) as the chunk's user, with the chunk and the evidence in
   provenance; one that instructs agents or that its evidence does not support is held for
   review (`suspicion.py`).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from memories import spend
from memories.capture.extractor import Extraction, extract_candidates
from memories.capture.gates import apply_gates, has_enough_prose
from memories.capture.suspicion import hold_reason
from memories.jobs import Job, JobSettings, job_register
from memories.models import AuthorKind, Chunk, ChunkStatus, LlmPath, SourceKind
from memories.services.remember import RememberInput, memory_remember_many
from zeromemory.core.actor import Actor, Surface


def _before(chunk: Chunk) -> str | None:
    token = chunk.created_by_token
    if token is not None and not token.is_active():  # what a revoked token sent writes nothing
        EXTRACTION.finish(
            chunk,
            status=ChunkStatus.SKIPPED,
            extracted_at=timezone.now(),
            error="The token that sent this chunk was revoked or expired before extraction.",
        )
        return "token-inactive"
    if not has_enough_prose(chunk.content):
        EXTRACTION.finish(chunk, status=ChunkStatus.SKIPPED, extracted_at=timezone.now())
        return "skipped"
    # The user's budget counts their extraction spend rows today, in every scope: the rows the
    # insights report.
    if spend.over_budget(path=LlmPath.EXTRACTION, scope_id=chunk.scope_id, user_id=chunk.user_id):
        EXTRACTION.finish(
            chunk,
            status=ChunkStatus.DEFERRED,
            next_at=spend.next_utc_day(),
            error="The daily extraction token budget is spent; extraction resumes tomorrow.",
        )
        return "deferred"
    return None


def _extract(chunk: Chunk) -> Extraction:
    extraction = extract_candidates(text=chunk.content, source_kind=chunk.source_kind)
    spend.spend_record(
        path=LlmPath.EXTRACTION,
        scope_id=chunk.scope_id,
        user_id=chunk.user_id,
        tokens=extraction.tokens,
    )
    return extraction


def _apply(chunk: Chunk, extraction: Extraction) -> str:
    kept, dropped = apply_gates(
        candidates=extraction.candidates, chunk_text=chunk.content, source_kind=chunk.source_kind
    )
    memory_ids = _remember(chunk, kept, dropped)
    EXTRACTION.finish(
        chunk,
        status=ChunkStatus.EXTRACTED,
        extracted_at=timezone.now(),
        tokens_used=extraction.tokens,
        kept=len(memory_ids) - dropped["held_for_review"],
        dropped=dict(dropped),
        memory_ids=memory_ids,
        error="",
        next_at=None,
    )
    return "extracted"


def _remember(chunk: Chunk, kept: list, dropped: Counter) -> list[str]:
    """Write the kept candidates as the chunk's user; refusals count as dropped, by code."""
    if not kept:
        return []
    actor = Actor(
        user=chunk.user,
        token=chunk.created_by_token,
        surface=Surface.CAPTURE,
        client_name=chunk.client,
    )
    requests = [
        RememberInput(
            content=candidate.content,
            kind=candidate.kind,
            scope=chunk.scope.public_id,
            verbatim=candidate.evidence,
            conversation_id=chunk.conversation_id,
            source_path=chunk.source_path,
            chunk_hash=chunk.chunk_hash,
            author_kind=AuthorKind.CAPTURE,
            source_kind=SourceKind.EXTRACTION,
            chunk_id=chunk.id,
            entities=candidate.entities,
            held_reason=hold_reason(
                content=candidate.content, evidence=candidate.evidence, chunk_text=chunk.content
            ),
        )
        for candidate in kept
    ]
    ids = []
    for item in memory_remember_many(actor=actor, requests=requests):
        if item.error is not None:
            dropped[item.error.code] += 1
        else:
            ids.append(item.result.memory.public_id)
            if not item.result.memory.valid:
                dropped["held_for_review"] += 1
    return list(dict.fromkeys(ids))


EXTRACTION = job_register(
    Job(
        name="extraction",
        model=Chunk,
        task="memories.capture.tasks.extract",
        task_name="extract",
        settings=JobSettings(
            prefix="EXTRACTION",
            caller="EXTRACTOR",
            timeout=120,
            daily_tokens=2_000_000,
            budget_per="user",  # a user's day, over all their scopes
        ),
        spend_path=LlmPath.EXTRACTION,
        before=_before,
        call=_extract,
        apply=_apply,
        runnable=(ChunkStatus.PENDING, ChunkStatus.DEFERRED),
        waiting_status=ChunkStatus.WAITING_FOR_KEY,
        related=("user", "scope", "created_by_token"),
        batch=50,
    )
)


def chunk_extract(*, chunk_id: int, claim: str) -> str:
    """Extract one claimed chunk; returns what happened (for logs and tests)."""
    return EXTRACTION.run(row_id=chunk_id, claim=claim)


def chunk_retry(*, chunk: Chunk) -> str | None:
    """A failed chunk back in the queue with fresh attempts (the admin's action)."""
    return EXTRACTION.retry(row=chunk)


def purge_chunk_contents(*, now: datetime | None = None) -> int:
    """Empty the text of chunks extracted (or skipped) longer ago than the retention."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CHUNK_RETENTION_DAYS)
    return (
        Chunk.objects.filter(extracted_at__lt=cutoff, content_purged_at__isnull=True)
        .filter(Q(status=ChunkStatus.EXTRACTED) | Q(status=ChunkStatus.SKIPPED))
        .update(content="", content_purged_at=now or timezone.now())
    )
