"""Extraction of one chunk, off the request path, with the claim, lease and retries that
canonicalization uses.

1. claim: lock the chunk (skip_locked) and exchange the task's claim for a fresh one with a
   lease, so two workers never extract one chunk and a redelivered task does nothing;
2. skip a chunk with too little prose (no call); defer one whose user spent the day's token
   budget to the next UTC day; without a key, wait (`waiting_for_key`) without an attempt;
3. one Messages API call outside any transaction, then the gates;
4. every kept candidate through `remember()` (guard, dedup, language detection,
   canonicalization) as the chunk's user, with the chunk and the evidence in provenance; one
   that instructs agents or that its evidence does not support is held for review
   (`suspicion.py`). A chunk whose token was revoked meanwhile is skipped before any call.

A failure records the attempt and its error, and backs off (or fails at once when another
attempt cannot help; the admin retries failed chunks). The sweeper re-claims what is due,
including chunks whose worker died mid-task.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q, Sum
from django.utils import timezone

from memories.canonical.service import backoff_seconds
from memories.capture.extractor import extract_candidates
from memories.capture.gates import apply_gates, has_enough_prose
from memories.capture.suspicion import hold_reason
from memories.models import AuthorKind, Chunk, ChunkStatus, SourceKind
from memories.services.remember import RememberInput, memory_remember_many
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.llm import LLMCallFailed

logger = logging.getLogger(__name__)

SWEEP_BATCH = 50


def new_claim(chunk: Chunk) -> str:
    chunk.claim = uuid.uuid4().hex
    chunk.lease_until = timezone.now() + timedelta(seconds=settings.EXTRACTION_LEASE_SECONDS)
    return chunk.claim


def _claim(chunk_id: int, claim: str) -> Chunk | None:
    with transaction.atomic():
        chunk = (
            Chunk.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("user", "scope", "created_by_token")
            .filter(pk=chunk_id, status__in=[ChunkStatus.PENDING, ChunkStatus.DEFERRED])
            .first()
        )
        if chunk is None or not claim or chunk.claim != claim:
            return None
        new_claim(chunk)
        chunk.save(update_fields=["claim", "lease_until"])
        return chunk


def _tomorrow() -> datetime:
    midnight = datetime.combine(timezone.now().date() + timedelta(days=1), time.min)
    return timezone.make_aware(midnight, UTC)


def _spent_today(chunk: Chunk) -> int:
    today = datetime.combine(timezone.now().date(), time.min)
    spent = Chunk.objects.filter(
        user_id=chunk.user_id, extracted_at__gte=timezone.make_aware(today, UTC)
    ).aggregate(total=Sum("tokens_used"))["total"]
    return spent or 0


def _save(chunk: Chunk, **fields) -> None:
    for name, value in fields.items():
        setattr(chunk, name, value)
    chunk.claim, chunk.lease_until = "", None
    chunk.save(update_fields=[*fields, "claim", "lease_until"])


def chunk_extract(*, chunk_id: int, claim: str) -> str:
    """Extract one claimed chunk; returns what happened (for logs and tests)."""
    if not settings.ANTHROPIC_API_KEY:
        Chunk.objects.filter(pk=chunk_id, claim=claim).update(
            status=ChunkStatus.WAITING_FOR_KEY, claim="", lease_until=None
        )
        return "no-key"
    chunk = _claim(chunk_id, claim)
    if chunk is None:
        return "not-claimed"
    token = chunk.created_by_token
    if token is not None and not token.is_active():  # what a revoked token sent writes nothing
        _save(
            chunk,
            status=ChunkStatus.SKIPPED,
            extracted_at=timezone.now(),
            error="The token that sent this chunk was revoked or expired before extraction.",
        )
        return "token-inactive"
    if not has_enough_prose(chunk.content):
        _save(chunk, status=ChunkStatus.SKIPPED, extracted_at=timezone.now())
        return "skipped"
    budget = settings.EXTRACTION_DAILY_TOKENS
    if budget and _spent_today(chunk) >= budget:
        _save(
            chunk,
            status=ChunkStatus.DEFERRED,
            next_at=_tomorrow(),
            error="The daily extraction token budget is spent; extraction resumes tomorrow.",
        )
        return "deferred"
    try:
        extraction = extract_candidates(text=chunk.content, source_kind=chunk.source_kind)
    except LLMCallFailed as failure:
        return _record_failure(chunk, failure)
    kept, dropped = apply_gates(
        candidates=extraction.candidates, chunk_text=chunk.content, source_kind=chunk.source_kind
    )
    memory_ids = _remember(chunk, kept, dropped)
    _save(
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


def _record_failure(chunk: Chunk, failure: LLMCallFailed) -> str:
    attempts = chunk.attempts + 1
    final = not failure.retryable or attempts >= settings.EXTRACTION_MAX_ATTEMPTS
    _save(
        chunk,
        attempts=attempts,
        error=failure.message[:2000],
        status=ChunkStatus.FAILED if final else ChunkStatus.PENDING,
        next_at=None
        if final
        else timezone.now() + timedelta(seconds=backoff_seconds(attempts, failure.retry_after)),
    )
    logger.warning("extraction of chunk %s failed: %s", chunk.public_id, failure.message)
    return "failed" if final else "retry"


def due_chunks(*, limit: int = SWEEP_BATCH) -> list[tuple[int, str]]:
    """Claim chunks that are due: backoff over, no live lease, and waiting ones once a key is
    set; [(id, claim)]."""
    now = timezone.now()
    waiting = [ChunkStatus.WAITING_FOR_KEY] if settings.ANTHROPIC_API_KEY else []
    claimed = []
    with transaction.atomic():
        rows = (
            Chunk.objects.select_for_update(skip_locked=True)
            .filter(status__in=[ChunkStatus.PENDING, ChunkStatus.DEFERRED, *waiting])
            .exclude(next_at__gt=now)
            .exclude(lease_until__gt=now)
            .order_by("id")[:limit]
        )
        for chunk in rows:
            if chunk.status == ChunkStatus.WAITING_FOR_KEY:
                chunk.status = ChunkStatus.PENDING
            claimed.append((chunk.id, new_claim(chunk)))
            chunk.save(update_fields=["status", "claim", "lease_until"])
    return claimed


def chunk_retry(*, chunk: Chunk) -> str:
    """A failed chunk back in the queue with fresh attempts (the admin's action)."""
    chunk.status, chunk.attempts, chunk.next_at, chunk.error = ChunkStatus.PENDING, 0, None, ""
    claim = new_claim(chunk)
    chunk.save(update_fields=["status", "attempts", "next_at", "error", "claim", "lease_until"])
    return claim


def purge_chunk_contents(*, now: datetime | None = None) -> int:
    """Empty the text of chunks extracted (or skipped) longer ago than the retention."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.CHUNK_RETENTION_DAYS)
    return (
        Chunk.objects.filter(extracted_at__lt=cutoff, content_purged_at__isnull=True)
        .filter(Q(status=ChunkStatus.EXTRACTED) | Q(status=ChunkStatus.SKIPPED))
        .update(content="", content_purged_at=now or timezone.now())
    )
