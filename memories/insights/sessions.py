"""A session's receipt: what one conversation of the caller got from memory and gave to it,
counted in the scopes the caller may read now."""

from __future__ import annotations

from django.db.models import Q
from django.utils.translation import gettext as _

from memories.activity import batched as activity_batched
from memories.insights.schemas import ReceiptOut
from memories.models import ActivityLog, Conflict, Memory, Provenance
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ValidationFailed
from zeromemory.core.secrets import redact_secrets


def session_receipt(*, actor: Actor, conversation_id: str) -> ReceiptOut:
    """One conversation of the actor's user: what it got and gave, in the scopes it may read."""
    conversation_id = (conversation_id or "").strip()
    if not conversation_id or len(conversation_id) > 200:
        raise ValidationFailed(
            "conversation_id", _("conversation_id is required (at most 200 characters).")
        )
    # Activity rows keep a conversation id with any secret in it redacted: look that one up,
    # and never show the secret back.
    conversation_id = redact_secrets(conversation_id)[0]
    activity_batched.settled()  # the rows of calls this process answered just before
    readable = access.readable_scopes(actor)
    readable_ids = list(readable.values_list("public_id", flat=True))
    # As in the activity list: rows over scopes the actor can no longer read are left out, and
    # a token restricted to scopes sees rows over "every scope" only when it wrote them.
    calls = ActivityLog.objects.filter(
        user=actor.user, conversation_id=conversation_id, scopes__contained_by=readable_ids
    )
    if actor.scope_restricted:
        calls = calls.filter(Q(token=actor.token) | ~Q(scopes=[]))
    handed_out: set[str] = set()
    tokens = 0
    count = 0
    for operation, results, row_tokens in calls.values_list("operation", "results", "tokens"):
        count += 1
        tokens += row_tokens
        if operation != "remember":
            handed_out.update(
                item["id"] for item in results if isinstance(item, dict) and "id" in item
            )
    recalled = Memory.objects.filter(public_id__in=handed_out, scope__in=readable).count()
    written_ids = set(
        Provenance.objects.filter(
            created_by=actor.user, conversation_id=conversation_id, memory__scope__in=readable
        ).values_list("memory_id", flat=True)
    )
    conflicts = (
        Conflict.objects.filter(
            Q(memory_a_id__in=written_ids) | Q(memory_b_id__in=written_ids)
        ).count()
        if written_ids
        else 0
    )
    line = _(
        "This session: %(recalled)s memories recalled, %(written)s written, "
        "%(tokens)s tokens delivered, %(conflicts)s conflicts raised."
    ) % {
        "recalled": recalled,
        "written": len(written_ids),
        "tokens": f"{tokens:,}",
        "conflicts": conflicts,
    }
    return ReceiptOut(
        conversation_id=conversation_id,
        calls=count,
        memories_recalled=recalled,
        memories_written=len(written_ids),
        tokens_delivered=tokens,
        conflicts_raised=conflicts,
        line=line,
    )
