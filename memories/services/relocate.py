"""Move and share: a memory written again in another scope, add-only.

Both write a new memory in the target scope through the same guard and limits as remember (the
content guard refuses secrets, the text is checked, the embedding and windows come from the one
owner function); the new memory is by the caller (its client, user and token), with the lower of
the original's authority and the caller's, never a higher one. The original's provenance rows
are copied onto the new memory as they were, and one row by the caller records the move or the
share, its `claims` pointing back (`moved_from` or `shared_from`: the memory and its scope).
When the target already holds the same text as a valid memory, that memory absorbs the write
(the copied rows and the caller's join it as absorbed), as deduplication does for remember.

A move carries the memory's validity (when it was written, its validity periods, when it was
last confirmed), then forgets the original with a reason naming where it went; the original's
closed period points at the new memory, so its history (and the new memory's) shows the move,
and restore brings the original back. A share leaves the original unchanged; the copy is valid
from now.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.activity.logged import activity_logged
from memories.activity.models import ActivityOperation, ActivityOutcome
from memories.canonical.content import (
    Derived,
    Mentioned,
    clean_content,
    content_set,
    derived_copy,
    embed_derived,
    mentions_saved,
    translations_queued,
    window_rows,
)
from memories.models import (
    AUTHOR_RANKS,
    Memory,
    MemoryWindow,
    Provenance,
    SourceKind,
    ValidityPeriod,
    authenticated_author_kind,
)
from memories.services.lifecycle import memory_forget
from memories.state_rows import memories_confirmed, validity_written
from scopes.models import Scope
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.errors import ConflictError, DomainError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets

MAX_MOVE = 100  # memories per move


@dataclass
class Relocated:
    original: Memory  # as it is after the call (forgotten by a move, unchanged by a share)
    memory: Memory  # the memory in the target scope
    deduplicated: bool  # the target held the same text already and absorbed the write


def _author_kind(actor: Actor, original: Memory) -> str:
    own = authenticated_author_kind(actor)
    return min((own, original.author_kind), key=lambda kind: AUTHOR_RANKS[kind])


def _checked(memories: list[Memory], to: Scope, field: str) -> None:
    """What remember checks of a write, for the text each memory carries to `to`."""
    for memory in memories:
        if memory.scope_id == to.pk:
            raise ValidationFailed("to_scope", _("The memory is in this scope already."))
        if not memory.valid:
            raise ConflictError(
                _("%(id)s is forgotten or superseded: restore it first.")
                % {"id": memory.public_id},
                details={field: [_("Not valid: %(id)s.") % {"id": memory.public_id}]},
            )
        try:
            refuse_secrets({"content": memory.content, "content_original": memory.content_original})
            clean_content(memory.content)
        except DomainError as exc:
            raise exc.naming(field) from None


def _new_memory(actor: Actor, original: Memory, to: Scope, derived: Derived) -> Memory:
    now = timezone.now()
    memory = Memory(
        scope=to,
        kind_id=original.kind_id,
        author_kind=_author_kind(actor, original),
        agent_name=actor.client_name,
        created_by=actor.user,
        created_by_token=actor.token,
        created_at=now,
        valid_from=now,
        confirmed_at=original.confirmed_at,
    )
    content_set(memory, derived)
    return memory


def _carry_validity(original: Memory, memory: Memory) -> None:
    """The new memory's validity as the original's was: written then, its periods copied (the
    open one stays open on the new memory)."""
    memory.created_at = original.created_at
    memory.valid_from = original.valid_from or memory.valid_from
    memory.validity_gaps = original.validity_gaps


def _copy_periods(original: Memory, memory: Memory) -> None:
    periods = list(ValidityPeriod.objects.filter(memory=original).order_by("valid_from", "id"))
    if not periods:
        validity_written(memories=[memory], by=None)
        return
    ValidityPeriod.objects.bulk_create(
        ValidityPeriod(
            memory=memory,
            valid_from=period.valid_from,
            valid_until=period.valid_until,
            started=period.started,
            started_by_id=period.started_by_id,
            ended=period.ended,
            ended_by_id=period.ended_by_id,
        )
        for period in periods
    )


def _provenance(
    actor: Actor, original: Memory, memory: Memory, *, absorbed: bool, claim: str, carry: bool
) -> list[Provenance]:
    """The caller's row pointing back to the original; a move that writes a new memory carries
    the original's rows too (a share, or a write the target absorbs, carries none: the original
    keeps them, and copies of copies never multiply them)."""
    rows = Provenance.objects.filter(memory=original).order_by("created_at", "id") if carry else []
    copied = [
        Provenance(
            memory=memory,
            source_kind=row.source_kind,
            absorbed=row.absorbed or absorbed,
            client_name=row.client_name,
            conversation_id=row.conversation_id,
            source_path=row.source_path,
            chunk_hash=row.chunk_hash,
            chunk_id=row.chunk_id,
            verbatim=row.verbatim,
            written_text=row.written_text,
            author_name=row.author_name,
            created_by_id=row.created_by_id,
            created_by_token_id=row.created_by_token_id,
            created_at=row.created_at,
            claims=row.claims,
        )
        for row in rows
    ]
    surface = SourceKind.DASHBOARD if actor.surface == Surface.DASHBOARD else SourceKind.REMEMBER
    copied.append(
        Provenance(
            memory=memory,
            source_kind=surface,
            absorbed=absorbed,
            client_name=actor.client_name,
            conversation_id=actor.conversation_id,
            written_text=original.content
            if absorbed and original.content != memory.content
            else "",
            created_by=actor.user,
            created_by_token=actor.token,
            claims={claim: {"memory": original.public_id, "scope": original.scope.public_id}},
        )
    )
    return copied


def _write(
    actor: Actor, original: Memory, to: Scope, derived: Derived, *, move: bool
) -> tuple[Memory, bool]:
    """The memory in `to` for `original` (new, or the valid one holding its text), inside the
    caller's transaction."""
    held = (
        Memory.objects.select_for_update(of=("self",))
        .select_related("scope")
        .filter(scope=to, content_hash=derived.content_hash, valid=True)
        .first()
    )
    claim = "moved_from" if move else "shared_from"
    if held is not None:
        Provenance.objects.bulk_create(
            _provenance(actor, original, held, absorbed=True, claim=claim, carry=False)
        )
        memories_confirmed(ids={held.pk})
        return held, True
    memory = _new_memory(actor, original, to, derived)
    if move:
        _carry_validity(original, memory)
    try:
        with transaction.atomic():
            memory.save()
    except IntegrityError:
        # The same text became valid in the target meanwhile (another write won the race).
        raise ConflictError(
            _("The target scope was given the same text meanwhile: try again.")
        ) from None
    MemoryWindow.objects.bulk_create(window_rows(memory=memory, derived=derived))
    if move:
        _copy_periods(original, memory)
    else:
        validity_written(memories=[memory], by=actor.user)
    rows = _provenance(actor, original, memory, absorbed=False, claim=claim, carry=move)
    Provenance.objects.bulk_create(rows)
    translations_queued([memory])
    return memory, False


def _relocate(
    *, actor: Actor, memories: list[Memory], to: Scope, move: bool, field: str
) -> list[Relocated]:
    with activity_logged(
        actor=actor, operation=ActivityOperation.REMEMBER, scopes=[to.public_id]
    ) as entry:
        _checked(memories, to, field)
        copies = [derived_copy(memory) for memory in memories]
        embed_derived(copies)
        done: list[Relocated] = []
        with transaction.atomic():
            locked = Memory.objects.select_for_update(of=("self",)).select_related("scope")
            rows = locked.in_bulk([memory.pk for memory in memories])
            for memory, derived in zip(memories, copies, strict=True):
                original = rows[memory.pk]
                if not original.valid:
                    raise ConflictError(
                        _("%(id)s was forgotten meanwhile.") % {"id": original.public_id}
                    )
                written, deduplicated = _write(actor, original, to, derived, move=move)
                if move:
                    original = memory_forget(
                        actor=actor,
                        memory=original,
                        reason=_("Moved to scope %(scope)s as %(id)s.")
                        % {"scope": written.scope.public_id, "id": written.public_id},
                        replaced_by=written,
                    )
                done.append(Relocated(original, written, deduplicated))
            # What each copy is about, in its new scope: its text read again there.
            mentions_saved(
                [
                    Mentioned(memory=item.memory, derived=derived)
                    for item, derived in zip(done, copies, strict=True)
                    if not item.deduplicated
                ],
                by=actor.user,
            )
        entry.record(
            scopes=[to.public_id],
            results=[{"id": r.memory.public_id, "deduplicated": r.deduplicated} for r in done],
            outcome=ActivityOutcome.HIT,
        )
    return done


def memory_move(*, actor: Actor, memories: list[Memory], to: Scope) -> list[Relocated]:
    """Move these memories (each one the caller may write) to `to` (a scope it may write): all
    of them or, on any refusal, none."""
    if not memories:
        raise ValidationFailed("memory_ids", _("Name at least one memory."))
    if len(memories) > MAX_MOVE:
        raise ValidationFailed("memory_ids", _("At most %(n)d memories.") % {"n": MAX_MOVE})
    unique = list({memory.pk: memory for memory in memories}.values())
    return _relocate(actor=actor, memories=unique, to=to, move=True, field="memory_ids")


def memory_share(*, actor: Actor, memory: Memory, to: Scope) -> Relocated:
    """A copy of `memory` (which the caller reads) in `to` (a scope it may write)."""
    [shared] = _relocate(actor=actor, memories=[memory], to=to, move=False, field="memory_id")
    return shared
