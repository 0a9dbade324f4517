"""Typed links between memories: writing and removing them, and reading a memory's links.

Authority. Writing a link needs write access to its source memory's scope and read access to
its target; the caller obtains both memories through the access module (`memories.selectors`)
and hands them here, as for every service. Both ends live in one scope: a link across scopes
would sit in one scope's export, erasure and recall and point into another's, and a reader of
one end could learn of a memory in a scope they cannot read. To relate memories of two scopes,
share one into the other first (`share`), then link the copy.

Add-only. Removing a link sets `removed_at` and `removed_by` and keeps the row, so history
shows when a link was made and when it was taken back; the same link written again after a
removal is a new row. Writing a live link again is the same link (idempotent), even when two
writers race (the unique constraint on live links decides).

Reads answer only links whose two ends the actor can read (the same scope, so always both or
neither, but checked on both ends all the same).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.models import LinkType, Memory, MemoryLink, authenticated_author_kind
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, NotFound, ValidationFailed

LINK_TYPES = tuple(LinkType.values)


@dataclass(frozen=True)
class LinkWritten:
    link: MemoryLink
    created: bool  # False: the same live link was there already


def _locked_pair(source: Memory, target: Memory) -> tuple[Memory, Memory]:
    """Both memories' rows, locked in id order (as supersede does), so a forget of either waits
    for the link, or the link sees the memory forgotten."""
    rows = {
        row.pk: row
        for row in Memory.objects.select_for_update(of=("self",))
        .only("id", "public_id", "scope_id", "valid")  # no need of the embedding here
        .filter(pk__in=[source.pk, target.pk])
        .order_by("pk")
    }
    return rows[source.pk], rows[target.pk]


def link_create(*, actor: Actor, source: Memory, target: Memory, link_type: str) -> LinkWritten:
    """Link `source` to `target` with `link_type` (read "source <type> target"). `source` is a
    memory the actor may write, `target` one it may read. Refused: an unknown type, a link of a
    memory to itself, a target in another scope, either end forgotten or superseded."""
    if link_type not in LINK_TYPES:
        raise ValidationFailed(
            "type", _("Unknown link type; one of %(types)s.") % {"types": ", ".join(LINK_TYPES)}
        )
    if source.pk == target.pk:
        raise ValidationFailed("to", _("A memory cannot link to itself."))
    if source.scope_id != target.scope_id:
        raise ValidationFailed(
            "to",
            _("Both memories of a link must be in one scope: share one into the other's first."),
        )
    with transaction.atomic():
        source, target = _locked_pair(source, target)
        if not source.valid:
            raise ConflictError(_("This memory is forgotten or superseded: restore it first."))
        if not target.valid:
            raise ConflictError(
                _("The memory to link to is forgotten or superseded: restore it first.")
            )
        live = MemoryLink.objects.filter(
            source=source, target=target, link_type=link_type, removed_at__isnull=True
        ).first()
        if live is not None:
            return LinkWritten(link=live, created=False)
        try:
            with transaction.atomic():
                link = MemoryLink.objects.create(
                    scope_id=source.scope_id,
                    source=source,
                    target=target,
                    link_type=link_type,
                    author_kind=authenticated_author_kind(actor),
                    agent_name=actor.client_name[:120],
                    created_by=actor.user,
                    created_by_token=actor.token,
                )
        except IntegrityError:  # a concurrent writer made the same link first
            live = MemoryLink.objects.get(
                source=source, target=target, link_type=link_type, removed_at__isnull=True
            )
            return LinkWritten(link=live, created=False)
    return LinkWritten(link=link, created=True)


def link_remove(*, actor: Actor, link: MemoryLink) -> MemoryLink:
    """Take a link back (add-only: the row stays, with when and by whom). A link removed
    already answers as it is."""
    with transaction.atomic():
        link = MemoryLink.objects.select_for_update().get(pk=link.pk)
        if link.removed_at is None:
            link.removed_at = timezone.now()
            link.removed_by = actor.user
            link.save(update_fields=["removed_at", "removed_by"])
    return link


# -- reads ---------------------------------------------------------------------------------------


def readable_links(actor: Actor) -> QuerySet[MemoryLink]:
    """Links whose two ends the actor can read."""
    scopes = access.readable_scopes(actor)
    return MemoryLink.objects.filter(
        scope__in=scopes, source__scope__in=scopes, target__scope__in=scopes
    ).select_related("source", "target", "created_by", "removed_by")


@dataclass(frozen=True)
class MemoryLinks:
    """A memory's live links: those it makes (outgoing) and those made to it (incoming)."""

    outgoing: list[MemoryLink]
    incoming: list[MemoryLink]


def memory_links(*, actor: Actor, memory: Memory) -> MemoryLinks:
    """The live links of a memory the actor can read, both ways, oldest first."""
    rows = list(
        readable_links(actor)
        .filter(Q(source=memory) | Q(target=memory), removed_at__isnull=True)
        .defer("source__embedding", "target__embedding")
        .order_by("created_at", "id")
    )
    return MemoryLinks(
        outgoing=[row for row in rows if row.source_id == memory.pk],
        incoming=[row for row in rows if row.target_id == memory.pk],
    )


def memory_link_history(*, actor: Actor, memory: Memory) -> list[MemoryLink]:
    """Every link from or to a readable memory, removed ones too, oldest first."""
    return list(
        readable_links(actor)
        .filter(Q(source=memory) | Q(target=memory))
        .defer("source__embedding", "target__embedding")
        .order_by("created_at", "id")
    )


def link_of_memory(*, actor: Actor, memory: Memory, public_id: str) -> MemoryLink:
    """A link from or to `memory` (obtained through the access module), or NotFound."""
    link = (
        readable_links(actor)
        .filter(Q(source=memory) | Q(target=memory), public_id=public_id)
        .defer("source__embedding", "target__embedding")
        .first()
    )
    if link is None:
        raise NotFound(_("No link with id %(id)s on this memory.") % {"id": public_id})
    return link
