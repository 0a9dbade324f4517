"""The activity log: one row per recall, build_context, briefing and remember."""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from zeromemory.core.actor import Surface
from zeromemory.core.ids import new_public_id


class ActivityOperation(models.TextChoices):
    RECALL = "recall", _("Recall")
    BUILD_CONTEXT = "build_context", _("Build context")
    BRIEFING = "briefing", _("Briefing")
    REMEMBER = "remember", _("Remember")
    INGEST = "ingest", _("Ingest")


class ActivityOutcome(models.TextChoices):
    HIT = "hit", _("Hit")
    EMPTY = "empty", _("Empty")
    ERROR = "error", _("Error")


class ActivityLog(models.Model):
    """One read or write: who asked, through which surface, the query exactly as sent, the answer.

    `query` is stored byte for byte as it arrived (never translated or normalised), so what the
    caller sent, what the search ran on and what this log shows are one string. `token` points at
    the token row; the secret itself is never stored anywhere.
    """

    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "act")
    )
    surface = models.CharField(_("surface"), max_length=16, choices=Surface.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("user"),
    )
    token = models.ForeignKey(
        "scopes.ApiToken",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("token"),
    )
    client_name = models.CharField(_("client"), max_length=120, blank=True, default="")
    operation = models.CharField(_("operation"), max_length=16, choices=ActivityOperation.choices)
    # Public ids of the scopes the caller asked for; empty means every scope it may read.
    scopes = models.JSONField(_("scopes"), default=list, blank=True)
    # Ids of the scopes a read actually searched, as the credential allowed at that moment: the
    # insights attribute the read to these (never to the user's memberships at fold time).
    searched_scopes = ArrayField(models.BigIntegerField(), default=list, blank=True)
    query = models.TextField(_("query"), blank=True, default="")
    # Other inputs that shaped the answer (k, kinds, max_tokens).
    options = models.JSONField(_("options"), default=dict, blank=True)
    # [{"id": <memory public id>, "score": <float or null>}, ...] in answer order.
    results = models.JSONField(_("results"), default=list, blank=True)
    # The read path's steps that shaped the answer, by name: {"floor": {"below": 3,
    # "nothing_relevant": false}, "session": {"lifted": [<memory public id>, ...]}}.
    steps = models.JSONField(_("steps"), default=dict, blank=True)
    latency_ms = models.FloatField(_("latency (ms)"))
    outcome = models.CharField(_("outcome"), max_length=8, choices=ActivityOutcome.choices)
    error_code = models.CharField(_("error code"), max_length=32, blank=True, default="")
    # Memories this answer handed out whose recall_count has not been bumped yet. A scheduled
    # task adds them up in batches: bumping counts inline made every recall a write to ten
    # random memory rows (slow, and churn in their indexes), for a figure briefings read.
    # The agent's conversation (session) the call belongs to, when the caller named one.
    conversation_id = models.CharField(_("conversation"), max_length=200, blank=True, default="")
    # Tokens of memory content the answer handed out.
    tokens = models.PositiveIntegerField(_("tokens delivered"), default=0)
    pending_recalls = ArrayField(models.BigIntegerField(), default=list, blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)

    class Meta:
        verbose_name = _("activity")
        verbose_name_plural = _("activity")
        ordering = ["-public_id"]
        indexes = [
            models.Index(fields=["user", "-public_id"], name="activity_user_recent"),
            models.Index(
                fields=["id"], condition=~Q(pending_recalls=[]), name="activity_pending_recalls"
            ),
            models.Index(
                fields=["user", "conversation_id"],
                condition=~Q(conversation_id=""),
                name="activity_conversation",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.operation} by {self.user_id} ({self.outcome})"
