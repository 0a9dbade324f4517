"""Canonicalization: a memory written in another language becomes canonical English.

The memory is stored and readable at once (status pending). A django-q2 task then translates it:

1. claim: lock the row (skip_locked) and check that the task's claim is still the memory's
   claim, so two workers never translate one memory at once and a late worker whose lease ran
   out cannot overwrite the one that took over;
2. translate outside any transaction (one Messages API call, then the protected-span check);
3. apply in one transaction: content becomes the English, the original text and language stay,
   the embedding and windows are recomputed, status done; unless the content was edited in the
   meantime (revision changed), in which case the stale translation is dropped;
4. dedup again: when the English is the same as a valid memory already in the scope, the
   translated memory is superseded by it and its provenance moves there, original text included.

A failure records the attempt and its error and leaves the memory pending until the next attempt
(exponential backoff) or, after the last one, marks it failed. No API key: the memory waits,
pending, without spending attempts. The sweeper (a django-q2 schedule) re-claims pending
memories that are due, including those whose worker died mid-task.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pgvector.django import CosineDistance

from memories.canonical.translator import TranslationFailed, translate_to_english
from memories.embeddings import embed_contents
from memories.models import Memory, TranslationStatus
from memories.services.common import content_hash, move_provenance, save_windows

logger = logging.getLogger(__name__)

SWEEP_BATCH = 100


def new_claim(memory: Memory, *, now=None) -> str:
    """Give the memory a fresh claim and lease (the caller saves it); returns the claim."""
    now = now or timezone.now()
    memory.translation_claim = uuid.uuid4().hex
    memory.translation_lease_until = now + timedelta(seconds=settings.TRANSLATION_LEASE_SECONDS)
    return memory.translation_claim


@dataclass(frozen=True)
class Claimed:
    claim: str
    content: str
    lang: str
    revision: int


def _claim(memory_id: int, claim: str) -> Claimed | None:
    """Take the memory for one translation attempt, or None when `claim` is not current.

    The claim is exchanged for a fresh one here, so a queued claim is good for one attempt only:
    the same task delivered twice (a broker redelivery) finds its claim gone and does nothing,
    instead of translating the memory a second time while the first delivery is still at it.
    """
    with transaction.atomic():
        memory = (
            Memory.objects.select_for_update(skip_locked=True)
            .filter(pk=memory_id, translation_status=TranslationStatus.PENDING)
            .first()
        )
        # An empty claim is no claim: it must not match a memory whose claim was released.
        if memory is None or not claim or memory.translation_claim != claim:
            return None
        taken = new_claim(memory)
        memory.save(update_fields=["translation_claim", "translation_lease_until"])
        return Claimed(taken, memory.content, memory.content_lang, memory.content_revision)


def _locked_if_still_ours(memory_id: int, claim: str, revision: int) -> Memory | None:
    memory = (
        Memory.objects.select_for_update(of=("self",)).select_related("scope").get(pk=memory_id)
    )
    if (
        memory.translation_claim != claim
        or memory.content_revision != revision
        or memory.translation_status != TranslationStatus.PENDING
    ):
        logger.info("dropping a stale translation of %s", memory.public_id)
        return None
    return memory


def canonicalize_memory(*, memory_id: int, claim: str) -> str:
    """Translate one pending memory. Returns what happened (for logs and tests)."""
    claimed = _claim(memory_id, claim)
    if claimed is None:
        return "not-claimed"
    claim = claimed.claim
    if not settings.ANTHROPIC_API_KEY:
        wait_for_key(memory_id=memory_id, claim=claim)
        return "no-key"
    try:
        english = translate_to_english(text=claimed.content, source_lang=claimed.lang)
    except TranslationFailed as failure:
        return _record_failure(memory_id, claim, claimed.revision, failure)
    embedded = embed_contents([english])[0]
    with transaction.atomic():
        memory = _locked_if_still_ours(memory_id, claim, claimed.revision)
        if memory is None:
            return "stale"
        memory.content_original = memory.content
        memory.content = english
        memory.content_hash = content_hash(english)
        memory.translation_status = TranslationStatus.DONE
        memory.translation_attempts += 1
        memory.translation_error = ""
        memory.translation_claim = ""
        memory.translation_lease_until = None
        memory.translation_next_at = None
        memory.embedding = embedded.vector
        save_windows(memory=memory, embedded=embedded, replace=True)
        twin = _merge_target(memory, embedded.vector)
        if twin is not None:
            _merge_into(memory, twin)
            return "merged"
        memory.save()
    return "done"


def _merge_target(memory: Memory, vector: list[float]) -> Memory | None:
    """A valid memory in the scope that says the same as the translation, if any."""
    others = (
        Memory.objects.select_for_update()
        .filter(scope=memory.scope, valid=True)
        .exclude(pk=memory.pk)
    )
    same_text = others.filter(content_hash=memory.content_hash).order_by("id").first()
    if same_text is not None:
        return same_text
    nearest = (
        others.filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")
        .first()
    )
    if nearest is not None and 1.0 - nearest.distance >= settings.CANONICAL_MERGE_SIMILARITY:
        return nearest
    return None


def _merge_into(memory: Memory, survivor: Memory) -> None:
    """The translated memory joins `survivor`: invalidated, its provenance moved, original kept."""
    now = timezone.now()
    memory.valid = False
    memory.superseded_by = survivor
    memory.superseded_at = now
    memory.save()
    move_provenance(source=memory, target=survivor, written_text=memory.content_original)


WAITING_FOR_KEY = "ANTHROPIC_API_KEY is not set; waiting for a key."


def wait_for_key(*, memory_id: int, claim: str) -> None:
    """No key to translate with: the memory stays pending without spending an attempt.

    The claim and lease are released (not left to run out), so the first sweep after a key is
    configured takes the memory at once. Without a key the sweeper claims nothing, so this
    does not make the memory spin.
    """
    Memory.objects.filter(pk=memory_id, translation_claim=claim).update(
        translation_claim="",
        translation_lease_until=None,
        translation_error=WAITING_FOR_KEY,
        translation_next_at=None,
    )


def backoff_seconds(attempts: int, retry_after: float | None) -> float:
    delay = settings.TRANSLATION_BACKOFF_SECONDS * (2 ** max(0, attempts - 1))
    return max(delay, retry_after or 0)


def _record_failure(memory_id: int, claim: str, revision: int, failure: TranslationFailed) -> str:
    with transaction.atomic():
        memory = _locked_if_still_ours(memory_id, claim, revision)
        if memory is None:
            return "stale"
        memory.translation_attempts += 1
        memory.translation_error = failure.message[:2000]
        memory.translation_claim = ""
        memory.translation_lease_until = None
        # A refusal another attempt cannot change (a bad key, a rejected request) fails at once;
        # the admin's "Retry translation" brings the memory back once the cause is fixed.
        if (
            not failure.retryable
            or memory.translation_attempts >= settings.TRANSLATION_MAX_ATTEMPTS
        ):
            memory.translation_status = TranslationStatus.FAILED
            memory.translation_next_at = None
            outcome = "failed"
        else:
            delay = backoff_seconds(memory.translation_attempts, failure.retry_after)
            memory.translation_next_at = timezone.now() + timedelta(seconds=delay)
            outcome = "retry"
        memory.save(
            update_fields=[
                "translation_attempts",
                "translation_error",
                "translation_claim",
                "translation_lease_until",
                "translation_status",
                "translation_next_at",
            ]
        )
    logger.warning("translation of memory %s failed (%s): %s", memory_id, outcome, failure.message)
    return outcome


def due_for_translation(*, limit: int = SWEEP_BATCH) -> list[tuple[int, str]]:
    """Claim pending memories that are due (backoff over, no live lease); [(id, claim)]."""
    now = timezone.now()
    claimed: list[tuple[int, str]] = []
    with transaction.atomic():
        rows = (
            Memory.objects.select_for_update(skip_locked=True)
            .filter(translation_status=TranslationStatus.PENDING)
            .exclude(translation_next_at__gt=now)
            .exclude(translation_lease_until__gt=now)
            .order_by("id")[:limit]
        )
        for memory in rows:
            claim = new_claim(memory, now=now)
            memory.save(update_fields=["translation_claim", "translation_lease_until"])
            claimed.append((memory.id, claim))
    return claimed


def retry_translation(*, memory: Memory) -> str | None:
    """Put a failed (or waiting) memory back in the queue with fresh attempts (admin action).

    Returns the new claim, for the caller to enqueue on commit (`tasks.enqueue_canonicalization`),
    or None when the memory needs no translation (done or skipped).
    """
    with transaction.atomic():
        locked = (
            Memory.objects.select_for_update()
            .filter(pk=memory.pk)
            .exclude(translation_status__in=[TranslationStatus.DONE, TranslationStatus.SKIPPED])
            .first()
        )
        if locked is None:
            return None
        claim = new_claim(locked)
        locked.translation_status = TranslationStatus.PENDING
        locked.translation_attempts = 0
        locked.translation_next_at = None
        locked.save(
            update_fields=[
                "translation_status",
                "translation_attempts",
                "translation_next_at",
                "translation_claim",
                "translation_lease_until",
            ]
        )
    return claim
