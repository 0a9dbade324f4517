"""mark_used as REST and MCP run it: it joins two capabilities, usage (`memories.rules`) and the
review queue's challenge (`memories.hygiene`), so it sits on the floor above both.

Every id is looked up before anything is written: one the caller cannot read answers not_found
(naming the field) and nothing changes. A memory found wrong must be one the caller may write,
as for `challenge`.

A use counts only when a recall, build_context or briefing served that memory to the same actor
(user and credential) in that conversation, as the activity log recorded it; other readable ids
are answered `not_counted`. A use has full weight (it counts towards rule candidates) only from
a writer or admin of the memory's scope through a credential not restricted to scopes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _

from memories import selectors
from memories.activity.log import served_in_conversation
from memories.hygiene.review import memory_challenge
from memories.rules.schemas import ChallengedOut, UsedOut
from memories.rules.usage import MAX_IDS, conversation_key, memories_mark_used
from scopes import access
from scopes.models import Role
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
    served = served_in_conversation(
        actor=actor,
        conversations=[conversation_key(conversation_id), conversation_id or ""],
        public_ids=[memory.public_id for memory in used],
    )
    not_counted = [m.public_id for m in used if m.public_id not in served]
    used = [memory for memory in used if memory.public_id in served]
    roles = access.roles_in(actor, list({memory.scope_id for memory in used}))
    full_weight = frozenset(
        memory.pk
        for memory in used
        if not actor.scope_restricted and roles.get(memory.scope_id, 0) >= Role.WRITER
    )
    with transaction.atomic():
        report = memories_mark_used(
            actor=actor,
            used=used,
            wrong=[memory for memory, _reason in found_wrong],
            conversation_id=conversation_id,
            full_weight=full_weight,
            not_counted=list(dict.fromkeys(not_counted)),
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
