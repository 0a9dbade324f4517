"""Rule candidates: a convention, decision, gotcha or preference used with full weight (by a
writer or admin of its scope, see `memories.rules.usage`) in at least `RULE_MIN_CONVERSATIONS`
distinct conversations is proposed to its scope's admins, and a writer may nominate any valid
memory (`rule_nominate`). A rejected rule is proposed again only when its memory's content has
changed since."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from memories.kinds import GUIDANCE_KINDS
from memories.models import Memory, ReportedUse, Rule, RuleStatus
from zeromemory.core.errors import ConflictError


def rules_propose(*, memories: list[Memory]) -> list[Rule]:
    """Propose (or refresh the count of) the rules these just-used memories earned."""
    eligible = {m.pk: m for m in memories if m.kind_id in GUIDANCE_KINDS and m.valid}
    if not eligible:
        return []
    counts = dict(
        ReportedUse.objects.filter(memory_id__in=eligible, wrong=False, full_weight=True)
        .exclude(conversation="")
        .values_list("memory_id")
        .annotate(n=Count("conversation", distinct=True))
    )
    earned = {pk: n for pk, n in counts.items() if n >= settings.RULE_MIN_CONVERSATIONS}
    existing = {rule.memory_id: rule for rule in Rule.objects.filter(memory_id__in=earned)}
    proposed = []
    for pk, n in earned.items():
        memory, rule = eligible[pk], existing.get(pk)
        if rule is None:
            rule = Rule.objects.create(
                scope_id=memory.scope_id, memory=memory, text=memory.content, conversations=n
            )
            proposed.append(rule)
        elif rule.status == RuleStatus.REJECTED and rule.decided_hash != memory.content_hash:
            rule.status, rule.text, rule.conversations = RuleStatus.CANDIDATE, memory.content, n
            rule.save(update_fields=["status", "text", "conversations"])
            proposed.append(rule)
        elif rule.conversations != n:
            rule.conversations = n
            rule.save(update_fields=["conversations"])
    return proposed


def rule_nominate(*, memory: Memory) -> Rule:
    """A writer's nomination of `memory` (valid, in a scope the caller writes) as a rule
    candidate of its scope; only a scope admin, signed in with a recent password check,
    approves it. A candidate or held rule is answered as it is; an approved rule, or a rejected
    one whose memory has not changed since, is a conflict."""
    if not memory.valid:
        raise ConflictError(_("A forgotten or superseded memory cannot become a rule."))
    with transaction.atomic():
        # get_or_create takes a savepoint: a nomination racing another (or rules_propose) finds
        # the rule the other wrote instead of failing on the one rule per memory.
        rule, created = Rule.objects.select_for_update().get_or_create(
            memory=memory, defaults={"scope_id": memory.scope_id, "text": memory.content}
        )
        if created:
            return rule
        if rule.status == RuleStatus.APPROVED:
            raise ConflictError(_("This memory is an approved rule already."))
        if rule.status == RuleStatus.REJECTED:
            if rule.decided_hash == memory.content_hash:
                raise ConflictError(
                    _("The admins rejected this rule; edit the memory before nominating it again.")
                )
            rule.status, rule.text = RuleStatus.CANDIDATE, memory.content
            rule.save(update_fields=["status", "text"])
    return rule
