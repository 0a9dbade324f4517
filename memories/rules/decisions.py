"""A scope admin's decisions on rules: approve (optionally in new words, the old wording kept as a
version), reject, and move an approved rule in the scope's order. Callers obtain the rule through
`memories.rules.selectors` (`rule_for_decision` for approving and moving: a person with a recent
password check); these services trust what they receive.

A wording that tells agents to fetch, run or send anything (`memories.rules.caution`) is held
for a second look rather than approved: it is not delivered until an admin approves it again
with `confirm`."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.models import Rule, RuleStatus, RuleVersion
from memories.rules.caution import needs_second_look
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets

MAX_RULE_CHARS = 4000


def _locked(rule: Rule) -> Rule:
    return Rule.objects.select_for_update().select_related("scope", "memory").get(pk=rule.pk)


def _approved(rule: Rule) -> list[Rule]:
    return list(
        Rule.objects.filter(scope_id=rule.scope_id, status=RuleStatus.APPROVED)
        .exclude(pk=rule.pk)
        .order_by("position", "id")
    )


def _renumber(rules: list[Rule]) -> None:
    for number, rule in enumerate(rules, start=1):
        if rule.position != number:
            rule.position = number
            rule.save(update_fields=["position"])


def _decided(rule: Rule, actor: Actor, status: str) -> None:
    rule.status = status
    rule.decided_by = actor.user
    rule.decided_at = timezone.now()
    rule.decided_hash = rule.memory.content_hash


def rule_approve(
    *, actor: Actor, rule: Rule, text: str | None = None, confirm: bool = False
) -> Rule:
    """Approve the rule (in `text` if given); held instead when its wording tells agents to
    fetch, run or send something, unless `confirm` (the admin's explicit second look)."""
    if text is not None:
        text = text.strip()
        if not text:
            raise ValidationFailed("text", _("The wording cannot be empty."))
        if "\x00" in text:
            raise ValidationFailed("text", _("NUL characters are not allowed."))
        if len(text) > MAX_RULE_CHARS:
            raise ValidationFailed("text", _("At most %(n)d characters.") % {"n": MAX_RULE_CHARS})
        refuse_secrets({"text": text})
    with transaction.atomic():
        rule = _locked(rule)
        if text is not None and text != rule.text:
            number = (rule.versions.aggregate(n=Max("number"))["n"] or 0) + 1
            RuleVersion.objects.create(
                rule=rule, number=number, text=rule.text, edited_by=actor.user
            )
            rule.text = text
        if needs_second_look(rule.text) and not confirm:
            _set_aside(rule, actor, RuleStatus.HELD)
            return rule
        if rule.status != RuleStatus.APPROVED:
            rule.position = len(_approved(rule)) + 1
        _decided(rule, actor, RuleStatus.APPROVED)
        rule.save()
    return rule


def rule_reject(*, actor: Actor, rule: Rule) -> Rule:
    with transaction.atomic():
        rule = _locked(rule)
        if rule.status == RuleStatus.REJECTED:
            raise ConflictError(_("This rule is already rejected."))
        _set_aside(rule, actor, RuleStatus.REJECTED)
    return rule


def _set_aside(rule: Rule, actor: Actor, status: str) -> None:
    """Take a rule out of the approved order (held or rejected); the others close the gap."""
    was_approved = rule.status == RuleStatus.APPROVED
    _decided(rule, actor, status)
    rule.position = 0
    rule.save()
    if was_approved:
        _renumber(_approved(rule))


def rule_move(*, actor: Actor, rule: Rule, position: int) -> Rule:
    """Put an approved rule at `position` (1 first) among its scope's approved rules."""
    if isinstance(position, bool) or not isinstance(position, int) or position < 1:
        raise ValidationFailed("position", _("Must be a whole number from 1."))
    with transaction.atomic():
        rule = _locked(rule)
        if rule.status != RuleStatus.APPROVED:
            raise ConflictError(_("Only approved rules have a place in the order."))
        others = _approved(rule)
        others.insert(min(position, len(others) + 1) - 1, rule)
        _renumber(others)
    rule.refresh_from_db()
    return rule
