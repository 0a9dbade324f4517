"""Edit, forget, supersede and restore. Nothing here deletes a memory."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.canonical.content import (
    Mentioned,
    clean_content,
    content_set,
    derived_text,
    embed_derived,
    mentions_saved,
    translations_queued,
    windows_saved,
)
from memories.kinds import kind_for_slug
from memories.models import Memory, MemoryVersion, ValidityEnd, ValidityStart
from memories.state_rows import validity_close, validity_open, validity_saved
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
    derived = None
    if content is not None:
        refuse_secrets({"content": content})
        derived = derived_text(clean_content(content))
        embed_derived([derived])  # before the row is locked
    with transaction.atomic():
        memory = locked(memory)
        changed_content = derived is not None and derived.content != memory.content
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
            content_set(memory, derived)
            memory.content_revision = F("content_revision") + 1
            windows_saved(memory=memory, derived=derived)
        try:
            with transaction.atomic():
                memory.save()
        except IntegrityError:
            raise _duplicate_conflict(memory) from None
        memory.refresh_from_db()
        if changed_content:
            # The new text's entities join the old ones' (mentions are what was said of it).
            mentions_saved([Mentioned(memory=memory, derived=derived)], by=actor.user)
            translations_queued([memory])
    return memory


def memory_forget(
    *, actor: Actor, memory: Memory, reason: str, replaced_by: Memory | None = None
) -> Memory:
    """Forget a valid memory, saying why. `replaced_by`: the memory that took its place (a move
    writes it in another scope), which its closed validity period points at."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed("reason", _("Say why this memory should be forgotten."))
    refuse_secrets({"reason": reason})
    with transaction.atomic():
        memory = locked(memory)
        if not memory.valid:
            raise ConflictError(_("This memory is already forgotten or superseded."))
        memory.forgotten_at = timezone.now()
        memory.forgotten_reason = reason
        memory.forgotten_by = actor.user
        validity_close(
            memory=memory,
            at=memory.forgotten_at,
            by=actor.user,
            ended=ValidityEnd.FORGOTTEN,
            replaced_by=replaced_by,
        )
        validity_saved(memory, update_fields=["forgotten_at", "forgotten_reason", "forgotten_by"])
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
        memory.superseded_by = replacement
        memory.superseded_at = timezone.now()
        validity_close(
            memory=memory,
            at=memory.superseded_at,
            by=actor.user,
            ended=ValidityEnd.SUPERSEDED,
            replaced_by=replacement,
        )
        validity_saved(memory, update_fields=["superseded_by", "superseded_at"])
    return memory


def memory_restore(*, actor: Actor, memory: Memory) -> Memory:
    """Undo forget or supersede."""
    with transaction.atomic():
        memory = locked(memory)
        if memory.valid:
            raise ConflictError(_("This memory is valid already."))
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
                validity_saved(
                    memory,
                    update_fields=["superseded_by", "restored_at", "restored_by", "confirmed_at"],
                )
        except IntegrityError:
            raise _duplicate_conflict(memory) from None
    return memory
