"""Edit, forget, supersede and restore. Nothing here deletes a memory."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.canonical.language import detect_language
from memories.canonical.service import TRANSLATION
from memories.canonical.tasks import enqueue_canonicalization
from memories.embeddings import embed_contents
from memories.kinds import kind_for_slug
from memories.models import Memory, MemoryVersion, TranslationStatus, ValidityEnd, ValidityStart
from memories.records import (
    VALIDITY_FIELDS,
    content_hash,
    save_windows,
    validity_close,
    validity_open,
)
from memories.services.remember_input import clean_content
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets


def locked(memory: Memory) -> Memory:
    """The memory's row, locked (its scope's row is read, not locked)."""
    return Memory.objects.select_for_update(of=("self",)).select_related("scope").get(pk=memory.pk)


def _duplicate_conflict(memory: Memory) -> ConflictError:
    twin = (
        Memory.objects.filter(scope=memory.scope, content_hash=memory.content_hash, valid=True)
        .exclude(pk=memory.pk)
        .values_list("public_id", flat=True)
        .first()
    )
    return ConflictError(
        _("An identical valid memory exists in this scope: %(id)s.") % {"id": twin},
        details={"duplicate_of": twin},
    )


def memory_edit(
    *, actor: Actor, memory: Memory, content: str | None = None, kind: str | None = None
) -> Memory:
    """Change content and/or kind, keeping the earlier text as a version.

    A content change is detected, embedded and (when not English) queued for canonicalization
    again; a translation in flight for the old text is discarded when it lands.
    """
    if content is None and kind is None:
        raise ValidationFailed("content", _("Send content or kind to change."))
    if kind is not None:
        kind_for_slug(kind)
    embedded = None
    claim = ""
    if content is not None:
        refuse_secrets({"content": content})
        content = clean_content(content)
        embedded = embed_contents([content])[0]
    with transaction.atomic():
        memory = locked(memory)
        changed_content = content is not None and content != memory.content
        changed_kind = kind is not None and kind != memory.kind_id
        if not (changed_content or changed_kind):
            return memory
        last = memory.versions.aggregate(n=Max("number"))["n"] or 0
        MemoryVersion.objects.create(
            memory=memory,
            number=last + 1,
            kind_id=memory.kind_id,
            content=memory.content,
            content_original=memory.content_original,
            content_lang=memory.content_lang,
            edited_by=actor.user,
        )
        memory.confirmed_at = timezone.now()
        if changed_kind:
            memory.kind_id = kind
        if changed_content:
            decision = detect_language(content)
            memory.content = content
            memory.content_hash = content_hash(content)
            memory.content_original = ""
            memory.content_lang = decision.lang
            memory.content_revision = F("content_revision") + 1
            memory.translation_status = (
                TranslationStatus.PENDING
                if decision.needs_translation
                else TranslationStatus.SKIPPED
            )
            memory.translation_attempts = 0
            memory.translation_error = ""
            memory.translation_next_at = None
            memory.embedding = embedded.vector
            save_windows(memory=memory, embedded=embedded, replace=True)
            claim = (
                TRANSLATION.new_claim(memory)
                if memory.translation_status == TranslationStatus.PENDING
                else ""
            )
            memory.translation_claim = claim
        try:
            with transaction.atomic():
                memory.save()
        except IntegrityError:
            raise _duplicate_conflict(memory) from None
        memory.refresh_from_db()
        if changed_content and claim:
            memory_id = memory.id
            transaction.on_commit(
                lambda: enqueue_canonicalization(memory_id=memory_id, claim=claim)
            )
    return memory


def memory_forget(*, actor: Actor, memory: Memory, reason: str) -> Memory:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("reason", _("Say why this memory should be forgotten."))
    refuse_secrets({"reason": reason})
    with transaction.atomic():
        memory = locked(memory)
        if not memory.valid:
            raise ConflictError(_("This memory is already forgotten or superseded."))
        memory.valid = False
        memory.forgotten_at = timezone.now()
        memory.forgotten_reason = reason
        memory.forgotten_by = actor.user
        validity_close(
            memory=memory, at=memory.forgotten_at, by=actor.user, ended=ValidityEnd.FORGOTTEN
        )
        memory.save(
            update_fields=[
                "valid",
                "forgotten_at",
                "forgotten_reason",
                "forgotten_by",
                "updated_at",
                *VALIDITY_FIELDS,
            ]
        )
    return memory


def memory_supersede(*, actor: Actor, memory: Memory, by: Memory) -> Memory:
    """Mark `memory` as replaced by `by` (a valid memory in the same scope)."""
    if by.pk == memory.pk:
        raise ValidationFailed("by", _("A memory cannot supersede itself."))
    if by.scope_id != memory.scope_id:
        raise ValidationFailed("by", _("The replacement must be in the same scope."))
    with transaction.atomic():
        # Both rows in one statement, in id order, so a concurrent supersede the other way
        # round (or a forget of either) waits instead of deadlocking.
        rows = {
            row.pk: row
            for row in Memory.objects.select_for_update(of=("self",))
            .select_related("scope")
            .filter(pk__in=[memory.pk, by.pk])
            .order_by("pk")
        }
        memory, replacement = rows[memory.pk], rows[by.pk]
        if not replacement.valid:
            raise ValidationFailed("by", _("The replacement is not valid."))
        if not memory.valid:
            raise ConflictError(_("This memory is already forgotten or superseded."))
        memory.valid = False
        memory.superseded_by = replacement
        memory.superseded_at = timezone.now()
        validity_close(
            memory=memory,
            at=memory.superseded_at,
            by=actor.user,
            ended=ValidityEnd.SUPERSEDED,
            replaced_by=replacement,
        )
        memory.save(
            update_fields=[
                "valid",
                "superseded_by",
                "superseded_at",
                "updated_at",
                *VALIDITY_FIELDS,
            ]
        )
    return memory


def memory_restore(*, actor: Actor, memory: Memory) -> Memory:
    """Undo forget or supersede."""
    with transaction.atomic():
        memory = locked(memory)
        if memory.valid:
            raise ConflictError(_("This memory is valid already."))
        memory.valid = True
        memory.superseded_by = None
        memory.restored_at = memory.confirmed_at = timezone.now()
        memory.restored_by = actor.user
        try:
            with transaction.atomic():
                validity_open(
                    memory=memory,
                    at=memory.restored_at,
                    by=actor.user,
                    started=ValidityStart.RESTORED,
                )
                memory.save(
                    update_fields=[
                        "valid",
                        "superseded_by",
                        "restored_at",
                        "restored_by",
                        "confirmed_at",
                        "updated_at",
                        *VALIDITY_FIELDS,
                    ]
                )
        except IntegrityError:
            raise _duplicate_conflict(memory) from None
    return memory
