"""What agents report about the memories they used, and the team rules that grow from it.

- `ReportedUse`: one report that a memory was used (or found wrong) in one conversation; a memory
  counts once per conversation, so the pair is unique.
- `UsageCounter`: one row per memory, what recall's usage boost reads (how often it was used, when
  last), kept beside the reports so the recall statement joins one narrow row instead of counting.
- `Rule`: a memory proposed to, approved or rejected by its scope's admins, with the wording the
  rule is delivered in; `RuleVersion` keeps each earlier wording.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memories.models.memory import Memory
from zeromemory.core.ids import new_public_id


class ReportedUse(models.Model):
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="uses")
    # The caller's conversation id ("" when it sent none: such uses count once in all).
    conversation = models.CharField(_("conversation"), max_length=200, blank=True, default="")
    wrong = models.BooleanField(_("found wrong"), default=False)
    # Whether the use counts towards rule candidates in full: reported by a writer or admin of
    # the memory's scope through a credential not restricted to scopes. A reader's or a
    # restricted token's use lifts ranking within a small bound and proposes no rule.
    full_weight = models.BooleanField(_("full weight"), default=False)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    used_by_token = models.ForeignKey(
        "scopes.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("reported"), default=timezone.now)

    class Meta:
        # The table keeps the model's first name: raw SQL and earlier migrations name it.
        db_table = "memories_memoryuse"
        verbose_name = _("reported use")
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "conversation"], name="memory_use_once_per_conversation"
            )
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} in {self.conversation or '-'}"


class UsageCounter(models.Model):
    memory = models.OneToOneField(
        Memory, on_delete=models.CASCADE, primary_key=True, related_name="usage"
    )
    uses = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    found_wrong_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table keeps the model's first name: raw SQL and earlier migrations name it.
        db_table = "memories_memoryusage"

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.uses}"


class RuleStatus(models.TextChoices):
    CANDIDATE = "candidate", _("Candidate")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    # Approved in words that tell agents to fetch, run or send something: not delivered until
    # an admin confirms it explicitly.
    HELD = "held", _("Held for a second look")


class Rule(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "rul")
    )
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.CASCADE, related_name="rules", verbose_name=_("scope")
    )
    memory = models.OneToOneField(
        Memory, on_delete=models.CASCADE, related_name="rule", verbose_name=_("memory")
    )
    status = models.CharField(
        _("status"), max_length=16, choices=RuleStatus.choices, default=RuleStatus.CANDIDATE
    )
    text = models.TextField(_("wording"))
    # Order among the scope's approved rules (1 first).
    position = models.PositiveIntegerField(_("position"), default=0)
    # Distinct conversations the memory was used in when it was proposed.
    conversations = models.PositiveIntegerField(_("conversations"), default=0)
    # The memory's content hash when the rule was decided: a rejected rule is proposed again
    # only once the memory's content changes.
    decided_hash = models.CharField(max_length=64, blank=True, default="", editable=False)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)
    created_at = models.DateTimeField(_("proposed"), default=timezone.now)

    class Meta:
        verbose_name = _("rule")
        ordering = ["scope_id", "position", "created_at", "id"]
        indexes = [models.Index(fields=["scope", "status", "position"], name="rule_scope_status")]

    def __str__(self) -> str:
        return self.text[:80]


class RuleVersion(models.Model):
    """An earlier wording of a rule, kept when an admin approves it with new words."""

    rule = models.ForeignKey(Rule, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    text = models.TextField()
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["rule_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "number"], name="rule_version_unique_number")
        ]

    def __str__(self) -> str:
        return f"version {self.number} of rule {self.rule_id}"
