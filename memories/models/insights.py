"""What the insights answer reads: the LLM spend per path, scope and day (the budgets' ledger),
and the daily rows the fold computes from the activity log, memories and chunks, so that an
answer over 90 days reads at most 90 rows a scope whatever the size of the activity log."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class LlmPath(models.TextChoices):
    TRANSLATION = "translation", _("Translation")
    EXTRACTION = "extraction", _("Extraction")
    JUDGE = "judge", _("Hygiene judge")


class LlmSpend(models.Model):
    """Tokens (input and output) spent by one LLM path for one scope on one UTC day: the rows the
    insights report and every daily budget counts. A path budgeted per user (extraction) keeps
    one row per user as well, so the user's budget counts their rows over all scopes; the other
    paths' rows name no user."""

    day = models.DateField(_("day"))
    path = models.CharField(_("path"), max_length=16, choices=LlmPath.choices)
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.CASCADE, related_name="+", verbose_name=_("scope")
    )
    # Whose work it was, for a path budgeted per user; an erased account's rows are folded into
    # the scope's rows without a user first (`spend.spend_user_forget`), so the scope's figures
    # stay whole.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("user"),
    )
    tokens = models.BigIntegerField(_("tokens"), default=0)
    calls = models.PositiveIntegerField(_("calls"), default=0)

    class Meta:
        verbose_name = _("LLM spend")
        verbose_name_plural = _("LLM spend")
        # One row per scope, path and day, and per user where there is one (NULLs are never
        # equal in a unique index, hence two partial ones; the recording statement names them).
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "path", "day"],
                condition=models.Q(user__isnull=True),
                name="llm_spend_one_per_day",
            ),
            models.UniqueConstraint(
                fields=["scope", "path", "day", "user"],
                condition=models.Q(user__isnull=False),
                name="llm_spend_one_per_user_day",
            ),
        ]
        indexes = [models.Index(fields=["user", "path", "day"], name="llm_spend_user_day")]

    def __str__(self) -> str:
        return f"{self.path} {self.day}: {self.tokens}"


class DailyFigures(models.Model):
    """One scope's figures of one UTC day, recomputed by the fold while the day is recent."""

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    recalls = models.PositiveIntegerField(default=0)
    contexts = models.PositiveIntegerField(default=0)
    briefings = models.PositiveIntegerField(default=0)
    empty_reads = models.PositiveIntegerField(default=0)  # recalls and contexts that found nothing
    memories_served = models.PositiveIntegerField(default=0)
    tokens_served = models.BigIntegerField(default=0)
    written_human = models.PositiveIntegerField(default=0)
    written_agent = models.PositiveIntegerField(default=0)
    written_capture = models.PositiveIntegerField(default=0)
    chunks = models.PositiveIntegerField(default=0)  # chunks extracted (or skipped) that day
    chunks_kept = models.PositiveIntegerField(default=0)  # memories they kept
    chunks_dropped = models.JSONField(default=dict, blank=True)  # candidates dropped, by reason

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "day"], name="daily_figures_one_per_day")
        ]

    def __str__(self) -> str:
        return f"{self.scope_id} {self.day}"


class DailyVisitor(models.Model):
    """A distinct agent session (conversation id) or client a scope served on a day."""

    SESSION, CLIENT = "session", "client"

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    kind = models.CharField(max_length=8)
    key = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "day", "kind", "key"], name="daily_visitor_one_per_day"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} {self.day}"


class LastVisit(models.Model):
    """The last day a scope served a session or client, kept by the fold beside the daily
    rows: how many distinct ones a period saw is a count of these rows from the period's first
    day, however many days it spans. Rows older than the longest period are pruned."""

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=8)
    key = models.CharField(max_length=200)
    day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "kind", "key"], name="last_visit_one_per_key")
        ]
        indexes = [models.Index(fields=["scope", "day", "kind"], name="last_visit_scope_day")]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} {self.day}"


class DailyRecalled(models.Model):
    """How often one memory was handed out on a day."""

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, related_name="+")
    times = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "day"], name="daily_recalled_one_per_day")
        ]
        # Covering: the most recalled memories of a period are summed from the index alone.
        indexes = [
            models.Index(
                fields=["scope", "day"],
                include=["memory", "times"],
                name="daily_recalled_scope_day",
            )
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} {self.day}: {self.times}"


class EmptyRead(models.Model):
    """A recall or context of a scope that found nothing, with the query exactly as sent."""

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    activity = models.ForeignKey("memories.ActivityLog", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    operation = models.CharField(max_length=16)
    query = models.TextField(blank=True, default="")
    query_lang = models.CharField(max_length=8, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "activity"], name="empty_read_once")
        ]
        indexes = [models.Index(fields=["scope", "-created_at"], name="empty_read_recent")]

    def __str__(self) -> str:
        return f"{self.operation}: {self.query[:40]}"
