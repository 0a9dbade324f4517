"""Writes of the review queue: resolve a conflict (a person's action or the automatic rules),
undo the last action, and challenge a memory. Add-only: a memory is superseded or forgotten
through the lifecycle services and brought back by restore; nothing is deleted.

Callers obtain the conflict through `memories.hygiene.selectors` (scope admins only) and the
memory through `memories.selectors`; these services trust what they receive.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.hygiene.auto_resolution import merge_loser, standing
from memories.models import (
    Conflict,
    ConflictAction,
    ConflictStatus,
    Memory,
    Relation,
    Resolution,
)
from memories.services.lifecycle import locked, memory_forget, memory_restore, memory_supersede
from memories.state_rows import move_provenance, return_provenance
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, DomainError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets

ACTIONS = (*Resolution.values, "undo")
# A challenge and a held memory (one memory, no pair): keep it, forget it (or leave it out), or
# dismiss the item.
CHALLENGE_ACTIONS = (Resolution.KEEP_BOTH, Resolution.FORGET_A, Resolution.DISMISS)
# The side a supersession retires.
_RETIRES = {Resolution.A_SUPERSEDES_B: "b", Resolution.B_SUPERSEDES_A: "a"}


def _locked(conflict: Conflict) -> Conflict:
    return (
        Conflict.objects.select_for_update(of=("self",))
        .select_related("memory_a", "memory_b", "scope")
        .get(pk=conflict.pk)
    )


def _sides(conflict: Conflict) -> dict[str, Memory | None]:
    return {"a": conflict.memory_a, "b": conflict.memory_b}


def _mark(
    conflict: Conflict,
    *,
    resolution: str,
    automatic: bool,
    by: AbstractBaseUser | None,
    at: datetime | None,
) -> None:
    """Record a conflict's resolution (or, with an empty one, open it again)."""
    conflict.status = ConflictStatus.RESOLVED if resolution else ConflictStatus.OPEN
    conflict.resolution = resolution
    conflict.resolved_automatically = automatic
    conflict.resolved_by = by
    conflict.resolved_at = at
    conflict.save(
        update_fields=[
            "status",
            "resolution",
            "resolved_automatically",
            "resolved_by",
            "resolved_at",
        ]
    )


def _apply(
    conflict: Conflict,
    resolution: Resolution,
    *,
    actor: Actor | None,
    retire: str | None,
    move: bool,
) -> ConflictAction:
    """Retire (supersede or forget) the chosen side, record the action, close the conflict.
    `actor` None: the automatic rules."""
    sides = _sides(conflict)
    action = ConflictAction(
        conflict=conflict,
        resolution=resolution,
        automatic=actor is None,
        by=None if actor is None else actor.user,
        surface="" if actor is None else actor.surface,
    )
    who = actor or Actor(user=None)  # the rules act as nobody
    reason = _("Forgotten in hygiene review (%(id)s).") % {"id": conflict.public_id}
    if conflict.verdict == Relation.HELD:
        # Keep brings the held memory in; forget and dismiss leave it out, as it is.
        if resolution == Resolution.KEEP_BOTH:
            action.kept = memory_restore(actor=who, memory=conflict.memory_a)
    elif resolution in (Resolution.FORGET_A, Resolution.FORGET_B):
        retired = sides["a" if resolution == Resolution.FORGET_A else "b"]
        memory_forget(actor=who, memory=retired, reason=reason)
        action.retired = retired
    elif retire is not None:
        retired, kept = sides[retire], sides["b" if retire == "a" else "a"]
        memory_supersede(actor=who, memory=retired, by=kept)
        if move:
            action.moved_provenance = move_provenance(
                source=retired, target=kept, written_text=retired.content
            )
        action.retired, action.kept = retired, kept
    action.save()
    _mark(
        conflict, resolution=resolution, automatic=actor is None, by=action.by, at=action.created_at
    )
    return action


def resolve_automatically(*, conflict: Conflict, resolution: Resolution, retire: str) -> None:
    """The rules' resolution of a judged pair (inside the judge's transaction): the retired
    memory is superseded and its provenance joins the kept one."""
    _apply(conflict, resolution, actor=None, retire=retire, move=True)


def conflict_resolve(*, actor: Actor, conflict: Conflict, action: str) -> Conflict:
    """A person's (or an agent's) resolution, or `undo` of the last one."""
    if action not in ACTIONS:
        raise ValidationFailed("action", _("Unknown action."))
    if action == "undo":
        return conflict_undo(actor=actor, conflict=conflict)
    resolution = Resolution(action)
    with transaction.atomic():
        conflict = _locked(conflict)
        if conflict.status != ConflictStatus.OPEN:
            raise ConflictError(_("This conflict is not open; undo its resolution first."))
        if conflict.is_challenge and resolution not in CHALLENGE_ACTIONS:
            raise ValidationFailed(
                "action", _("A challenge can be kept, forgotten (forget_a) or dismissed.")
            )
        retire, move = None, False
        if resolution in _RETIRES:
            retire = _RETIRES[resolution]
        elif resolution == Resolution.MERGE:
            retire = merge_loser(standing(conflict.memory_a), standing(conflict.memory_b))
            move = True
        _apply(conflict, resolution, actor=actor, retire=retire, move=move)
    return conflict


Answer = TypeVar("Answer")
MAX_BULK = 50  # resolutions in one bulk call


class _DryRun(Exception):
    """Raised to roll a dry run's transaction back once its answers are rendered."""


def conflicts_resolve(
    *,
    actor: Actor,
    resolutions: list[tuple[Conflict, str]],
    dry_run: bool = False,
    confirm: bool = False,
    render: Callable[[Conflict], Answer],
) -> list[Answer]:
    """Several resolutions (or undos) at once, in order, all or nothing: one that cannot be
    applied leaves none written and is refused as `validation_failed` naming `items.<index>`.
    Each answer is `render(conflict)` once all are applied; a dry run applies them the same
    way, renders, and rolls everything back, so it answers exactly what the call would do.
    More than one resolution for real needs `confirm` (the caller said it means it)."""
    if not dry_run and len(resolutions) > 1 and not confirm:
        raise ValidationFailed(
            "confirm",
            _(
                "Resolving several items changes memories: send confirm: true "
                "(or dry_run: true to see what would happen)."
            ),
        )
    answers: list[Answer] = []
    try:
        with transaction.atomic():
            for index, (conflict, action) in enumerate(resolutions):
                try:
                    conflict_resolve(actor=actor, conflict=conflict, action=action)
                except DomainError as exc:
                    raise ValidationFailed(f"items.{index}", exc.message) from None
            answers = [render(conflict) for conflict, _action in resolutions]
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return answers


def conflict_undo(*, actor: Actor, conflict: Conflict) -> Conflict:
    """Reverse the last action: the retired memory is restored (with its provenance), and the
    conflict is open for review again."""
    with transaction.atomic():
        conflict = _locked(conflict)
        last = (
            conflict.actions.filter(undone_at__isnull=True).order_by("-created_at", "-id").first()
        )
        if last is None or conflict.status != ConflictStatus.RESOLVED:
            raise ConflictError(_("This conflict has no resolution to undo."))
        if last.retired_id is not None:
            retired = Memory.objects.get(pk=last.retired_id)
            if not retired.valid:
                memory_restore(actor=actor, memory=retired)
            return_provenance(moved=last.moved_provenance, to=retired)
        elif conflict.verdict == Relation.HELD and last.kept_id is not None:
            kept = Memory.objects.get(pk=last.kept_id)
            if kept.valid:  # held back again, with the reason it was held for
                memory_forget(actor=actor, memory=kept, reason=conflict.rationale)
        last.undone_at = timezone.now()
        last.undone_by = actor.user
        last.save(update_fields=["undone_at", "undone_by"])
        _mark(conflict, resolution="", automatic=False, by=None, at=None)
    return conflict


MAX_CHALLENGE_TEXT = 20_000  # the reasons an open challenge gathers, at the most


def memory_challenge(*, actor: Actor, memory: Memory, reason: str) -> tuple[Conflict, bool]:
    """An agent (or a person) disputes a memory: a queue item for the scope's admins.

    Returns (the item, whether it is new). A memory has one open challenge at a time: a later
    challenger's reason is added to it (up to MAX_CHALLENGE_TEXT characters), and the memory's
    row lock makes concurrent challenges queue behind each other.
    """
    # One line: the gathered reasons are told apart by blank lines, so a reason cannot forge a
    # later challenger's entry.
    reason = " ".join((reason or "").split())
    if not reason:
        raise ValidationFailed("reason", _("Say why this memory is wrong."))
    refuse_secrets({"reason": reason})
    with transaction.atomic():
        memory = locked(memory)
        if not memory.valid:
            raise ConflictError(_("This memory is already forgotten or superseded."))
        open_challenge = Conflict.objects.filter(
            memory_a=memory, memory_b__isnull=True, status=ConflictStatus.OPEN
        ).first()
        if open_challenge is None:
            conflict = Conflict.objects.create(
                scope=memory.scope,
                memory_a=memory,
                status=ConflictStatus.OPEN,
                verdict=Relation.CHALLENGE,
                rationale=reason,
                challenged_by=actor.user,
            )
            return conflict, True
        added = f"{actor.user.get_username()}: {reason}"
        text = open_challenge.rationale
        said = text.split("\n\n")
        if reason not in said and added not in said and len(text) + len(added) < MAX_CHALLENGE_TEXT:
            open_challenge.rationale = f"{text}\n\n{added}"
            open_challenge.save(update_fields=["rationale"])
    return open_challenge, False
