"""Rule candidates: a convention, decision, gotcha or preference used with full weight (by a
writer or admin of its scope, see `memories.rules.usage`) in at least `RULE_MIN_CONVERSATIONS`
distinct conversations is proposed to its scope's admins. A rejected
rule is proposed again only when its memory's content has changed since."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Count

from memories.models import Memory, MemoryUse, Rule, RuleStatus
from memories.rulebook import RULE_KINDS


def rules_propose(*, memories: list[Memory]) -> list[Rule]:
    """Propose (or refresh the count of) the rules these just-used memories earned."""
    eligible = {m.pk: m for m in memories if m.kind_id in RULE_KINDS and m.valid}
    if not eligible:
        return []
    counts = dict(
        MemoryUse.objects.filter(memory_id__in=eligible, wrong=False, full_weight=True)
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
