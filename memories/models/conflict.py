"""Hygiene's review queue: a pair of memories that may say the same thing, replace one another or
disagree (found by the scan and judged by an LLM), or one memory an agent disputes (a challenge).

Nothing here deletes a memory. A resolution supersedes or forgets through the lifecycle services,
and every action, automatic or a person's, leaves a `ConflictAction` row that undo reverses.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memories.models.memory import Memory
from zeromemory.core.ids import new_public_id


class Relation(models.TextChoices):
    """The judge's verdict on a pair, `challenge` for a memory an agent disputes, or `held` for
    an extracted memory capture held back for review (stored forgotten until an admin keeps it)."""

    DUPLICATE = "duplicate", _("Duplicate")
    A_SUPERSEDES_B = "a_supersedes_b", _("A supersedes B")
    B_SUPERSEDES_A = "b_supersedes_a", _("B supersedes A")
    CONTRADICTION = "contradiction", _("Contradiction")
    COMPLEMENTARY = "complementary", _("Complementary")
    UNRELATED = "unrelated", _("Unrelated")
    CHALLENGE = "challenge", _("Challenged")
    HELD = "held", _("Held from capture")


class ConflictStatus(models.TextChoices):
    PENDING = "pending", _("Waiting for the judge")
    WAITING_FOR_KEY = "waiting_for_key", _("Waiting for an API key")
    FAILED = "failed", _("Judge failed")
    OPEN = "open", _("To review")
    RESOLVED = "resolved", _("Resolved")
    CLEARED = "cleared", _("Nothing to do")


class Resolution(models.TextChoices):
    KEEP_BOTH = "keep_both", _("Keep both")
    A_SUPERSEDES_B = "a_supersedes_b", _("A supersedes B")
    B_SUPERSEDES_A = "b_supersedes_a", _("B supersedes A")
    MERGE = "merge", _("Merge")
    FORGET_A = "forget_a", _("Forget A")
    FORGET_B = "forget_b", _("Forget B")
    DISMISS = "dismiss", _("Dismiss")


class Conflict(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "cfl")
    )
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.PROTECT, related_name="conflicts", verbose_name=_("scope")
    )
    # A scan pair has a < b (by primary key: a is the older); a challenge has no b.
    memory_a = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="+", verbose_name=_("memory A")
    )
    memory_b = models.ForeignKey(
        Memory,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("memory B"),
    )
    similarity = models.FloatField(_("similarity"), null=True, blank=True)
    status = models.CharField(
        _("status"), max_length=16, choices=ConflictStatus.choices, default=ConflictStatus.PENDING
    )
    verdict = models.CharField(
        _("verdict"), max_length=16, choices=Relation.choices, blank=True, default=""
    )
    confidence = models.FloatField(_("confidence"), null=True, blank=True)
    rationale = models.TextField(_("rationale"), blank=True, default="")
    # Judge attempts, like a translation's: claim and lease, backoff, the last error.
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    error = models.TextField(_("last error"), blank=True, default="")
    claim = models.CharField(max_length=64, blank=True, default="", editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    next_at = models.DateTimeField(_("next attempt"), null=True, blank=True)

    resolution = models.CharField(
        _("resolution"), max_length=16, choices=Resolution.choices, blank=True, default=""
    )
    resolved_automatically = models.BooleanField(_("resolved automatically"), default=False)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("resolved by"),
    )
    resolved_at = models.DateTimeField(_("resolved"), null=True, blank=True)
    challenged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("challenged by"),
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    judged_at = models.DateTimeField(_("judged"), null=True, blank=True)

    class Meta:
        verbose_name = _("conflict")
        verbose_name_plural = _("conflicts")
        ordering = ["-public_id"]
        constraints = [
            # The pair key: a pair is judged (or queued) once, whatever the scans find again.
            models.UniqueConstraint(
                fields=["memory_a", "memory_b"],
                condition=Q(memory_b__isnull=False),
                name="conflict_one_per_pair",
            ),
            models.CheckConstraint(
                condition=Q(memory_b__isnull=True) | Q(memory_a__lt=F("memory_b")),
                name="conflict_pair_ordered",
            ),
        ]
        indexes = [
            models.Index(
                fields=["status", "next_at"],
                name="conflict_judge_queue",
                condition=Q(status__in=["pending", "waiting_for_key"]),
            ),
            models.Index(fields=["scope", "status", "-public_id"], name="conflict_scope_status"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.verdict or self.status})"

    @property
    def is_challenge(self) -> bool:
        return self.memory_b_id is None

    @property
    def memories(self) -> list[Memory]:
        """A and B side by side (A alone for a challenge)."""
        return [self.memory_a] if self.memory_b_id is None else [self.memory_a, self.memory_b]


class ConflictAction(models.Model):
    """One action taken on a conflict: who (or the automatic rules) did what, and how to undo it.

    `moved_provenance` holds `[id, absorbed, written_text]` of each provenance row a merge moved
    to the kept memory, as it was before, so that undo can put it back exactly.
    """

    conflict = models.ForeignKey(Conflict, on_delete=models.CASCADE, related_name="actions")
    resolution = models.CharField(_("resolution"), max_length=16, choices=Resolution.choices)
    automatic = models.BooleanField(_("automatic"), default=False)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    surface = models.CharField(_("surface"), max_length=16, blank=True, default="")
    retired = models.ForeignKey(
        Memory, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    kept = models.ForeignKey(
        Memory, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    moved_provenance = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(_("when"), default=timezone.now)
    undone_at = models.DateTimeField(_("undone"), null=True, blank=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        verbose_name = _("conflict action")
        verbose_name_plural = _("conflict actions")
        ordering = ["conflict_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.resolution} on {self.conflict_id}"


class HygieneScan(models.Model):
    """One run of the scan: its subjects are the memories changed since the last run started."""

    started_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Its subjects changed in [since, started_at) (since: the previous scan's start; none on the
    # first scan); a scan spread over several runs has done those with ids up to after_id.
    since = models.DateTimeField(null=True, blank=True)
    after_id = models.BigIntegerField(default=0)
    subjects = models.PositiveIntegerField(default=0)
    pairs_found = models.PositiveIntegerField(default=0)
    pairs_new = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"scan {self.started_at:%Y-%m-%d %H:%M}"
