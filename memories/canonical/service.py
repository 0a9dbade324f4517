"""Canonicalization: a memory written in another language becomes canonical English.

The memory is stored and readable at once (status pending). Its translation is a job of the
engine (`memories.jobs`: claim and lease, attempts, backoff, the sweeper), declared here:

1. before any call: a memory whose scope spent the day's translation budget
   (ZM_TRANSLATION_DAILY_TOKENS) stays pending, due again the next UTC day;
2. the call: one Messages API call outside any transaction, then the protected-span check;
3. apply, in one transaction while the claim is still ours: content becomes the English, the
   original text and language stay, the embedding and windows are recomputed, status done;
   unless the content was edited in the meantime (revision changed), in which case the stale
   translation is dropped;
4. dedup again: when the English is the same as a valid memory already in the scope, the
   translated memory is superseded by it and its provenance moves there, original text included.

A failure leaves the memory pending until the next attempt, or failed after the last one. No
API key: the memory waits, pending, without spending attempts.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone
from pgvector.django import CosineDistance

from memories import spend
from memories.canonical.content import (
    Derived,
    Mentioned,
    content_set,
    derived_translation,
    embed_derived,
    mentions_saved,
    windows_saved,
)
from memories.canonical.translator import translate_to_english
from memories.entities.given import GivenEntity
from memories.jobs import Job, JobSettings, job_register
from memories.models import LlmPath, Memory, MentionSource, TranslationStatus, ValidityEnd
from memories.state_rows import move_provenance, validity_close

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Translated:
    derived: Derived  # the English, embedded, with the original it was made from
    revision: int
    entities: tuple[GivenEntity, ...] = ()  # what the translator says the memory is about


OVER_BUDGET = "The scope's daily translation token budget is spent; translation resumes tomorrow."


def _before(memory: Memory) -> str | None:
    if spend.over_budget(path=LlmPath.TRANSLATION, scope_id=memory.scope_id):
        TRANSLATION.finish(
            memory, translation_next_at=spend.next_utc_day(), translation_error=OVER_BUDGET
        )
        return "deferred"
    return None


def _translate(memory: Memory) -> Translated:
    translation = translate_to_english(text=memory.content, source_lang=memory.content_lang)
    spend.spend_record(
        path=LlmPath.TRANSLATION, scope_id=memory.scope_id, tokens=translation.tokens
    )
    derived = derived_translation(
        translation.english, original=memory.content, lang=memory.content_lang
    )
    embed_derived([derived])
    return Translated(derived, memory.content_revision, translation.entities)


def _apply(memory: Memory, translated: Translated) -> str:
    if memory.content_revision != translated.revision:
        logger.info("dropping a stale translation of %s", memory.public_id)
        return "stale"
    attempts = memory.translation_attempts + 1
    content_set(memory, translated.derived)
    TRANSLATION.finish(memory, save=False, translation_attempts=attempts)
    windows_saved(memory=memory, derived=translated.derived)
    twin = _merge_target(memory, memory.embedding)
    if twin is not None:
        _merge_into(memory, twin)
    else:
        memory.save()
    # The English names what the original may have spelled otherwise: found again, with what
    # the translator said the memory is about.
    mentions_saved(
        [
            Mentioned(
                memory=memory,
                derived=translated.derived,
                given=translated.entities,
                given_source=MentionSource.TRANSLATOR,
            )
        ]
    )
    return "merged" if twin is not None else "done"


def _merge_target(memory: Memory, vector: list[float]) -> Memory | None:
    """A valid memory in the scope that says the same as the translation, if any, locked.

    Found first, then locked; the translated memory is locked already. A memory of the same
    text is waited for: it must be merged into (one valid memory per text), and it is English
    already, so its own translation is not what holds it. A nearest neighbour is waited for only
    when it is older, and taken when newer only if no one holds it: two translations whose
    texts are still stored in the original language, each the other's neighbour, then never
    wait for each other (the newer merges into the older once that one is done). A newer
    neighbour held elsewhere stays a near duplicate for hygiene to find.
    """
    others = Memory.objects.filter(scope=memory.scope, valid=True).exclude(pk=memory.pk)
    twin = others.filter(content_hash=memory.content_hash).order_by("id").only("pk").first()
    wait = True
    if twin is None:
        twin = (
            others.filter(embedding__isnull=False)
            .annotate(distance=CosineDistance("embedding", vector))
            .order_by("distance")
            .only("pk")
            .first()
        )
        if twin is None or 1.0 - twin.distance < settings.CANONICAL_MERGE_SIMILARITY:
            return None
        wait = twin.pk < memory.pk
    # The filter is checked again on the row as it is once locked: still valid, same scope.
    return others.select_for_update(skip_locked=not wait, of=("self",)).filter(pk=twin.pk).first()


def _merge_into(memory: Memory, survivor: Memory) -> None:
    """The translated memory joins `survivor`: invalidated, its provenance moved, original kept."""
    now = timezone.now()
    if memory.valid:  # a held or forgotten memory has no open period to close
        validity_close(
            memory=memory, at=now, by=None, ended=ValidityEnd.SUPERSEDED, replaced_by=survivor
        )
    memory.superseded_by = survivor
    memory.superseded_at = now
    memory.save()
    move_provenance(source=memory, target=survivor, written_text=memory.content_original)


WAITING_FOR_KEY = "ANTHROPIC_API_KEY is not set; waiting for a key."

TRANSLATION = job_register(
    Job(
        name="translation",
        model=Memory,
        task="memories.canonical.tasks.canonicalize",
        task_name="canonicalize",
        settings=JobSettings(
            prefix="TRANSLATION", caller="TRANSLATOR", timeout=30, daily_tokens=1_000_000
        ),
        spend_path=LlmPath.TRANSLATION,
        before=_before,
        call=_translate,
        apply=_apply,
        prefix="translation_",
        retryable=(TranslationStatus.PENDING, TranslationStatus.FAILED),
        # A memory has no status to wait in: it stays pending, the reason in its error.
        waiting_error=WAITING_FOR_KEY,
        related=("scope",),
    )
)


def canonicalize_memory(*, memory_id: int, claim: str) -> str:
    """Translate one pending memory. Returns what happened (for logs and tests)."""
    return TRANSLATION.run(row_id=memory_id, claim=claim)


def due_for_translation(*, limit: int | None = None) -> list[tuple[int, str]]:
    """Claim pending memories that are due (backoff over, no live lease); [(id, claim)]."""
    return TRANSLATION.due(limit=limit)


def retry_translation(*, memory: Memory) -> str | None:
    """Put a failed (or waiting) memory back in the queue with fresh attempts (admin action).

    Returns the new claim, for the caller to enqueue on commit (`tasks.enqueue_canonicalization`),
    or None when the memory needs no translation (done or skipped).
    """
    return TRANSLATION.retry(row=memory)
