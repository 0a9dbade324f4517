"""mark_used as REST and MCP run it: it joins two capabilities, usage (`memories.rules`) and the
review queue's challenge (`memories.hygiene`), so it sits on the floor above both.

Every id is looked up before anything is written: one the caller cannot read answers not_found
(naming the field) and nothing changes. A memory found wrong must be one the caller may write,
as for `challenge`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _

from memories import selectors
from memories.hygiene.review import memory_challenge
from memories.rules.schemas import ChallengedOut, UsedOut
from memories.rules.usage import MAX_IDS, conversation_key, memories_mark_used
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed
from zeromemory.core.secrets import refuse_secrets


@dataclass(frozen=True)
class Wrong:
    memory_id: str
    reason: str


def mark_used(
    *,
    actor: Actor,
    memory_ids: Sequence[str],
    wrong: Sequence[Wrong] = (),
    conversation_id: str | None = None,
) -> UsedOut:
    if not memory_ids and not wrong:
        raise ValidationFailed("memory_ids", _("Name at least one memory you used."))
    if len(memory_ids) > MAX_IDS or len(wrong) > MAX_IDS:
        raise ValidationFailed("memory_ids", _("At most %(n)d ids.") % {"n": MAX_IDS})
    refuse_secrets({"conversation_id": conversation_id})
    access.require_write_access(actor)
    try:
        used = [selectors.memory_for_read(actor=actor, public_id=i) for i in memory_ids]
    except NotFound as exc:
        raise exc.naming("memory_ids") from None
    try:
        found_wrong = [
            (selectors.memory_for_write(actor=actor, public_id=w.memory_id), w.reason)
            for w in wrong
        ]
    except NotFound as exc:
        raise exc.naming("wrong") from None
    with transaction.atomic():
        report = memories_mark_used(
            actor=actor,
            used=used,
            wrong=[memory for memory, _reason in found_wrong],
            conversation_id=conversation_id,
        )
        challenged = []
        for memory, reason in found_wrong:
            try:
                conflict, new = memory_challenge(actor=actor, memory=memory, reason=reason)
            except ValidationFailed as exc:
                raise exc.naming("wrong") from None
            challenged.append(
                ChallengedOut(memory_id=memory.public_id, conflict_id=conflict.public_id, new=new)
            )
    return UsedOut.of(
        report, conversation_id=conversation_key(conversation_id), challenged=challenged
    )
