"""Captured text waiting for (or done with) extraction: a transcript chunk, a document, history.

The ledger is per user and scope and keyed by the hash of the content as sent (`chunk_hash`), so
the same chunk sent twice to a scope is stored and extracted once. `content` holds the text with
its secrets redacted; it is emptied `ZM_CHUNK_RETENTION_DAYS` after extraction, when only the
hash and the results stay.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from zeromemory.core.ids import new_public_id


class ChunkSource(models.TextChoices):
    TRANSCRIPT = "transcript", _("Transcript")
    DOCUMENT = "document", _("Document")
    HISTORY = "history", _("History")


class ChunkStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    WAITING_FOR_KEY = "waiting_for_key", _("Waiting for an API key")
    DEFERRED = "deferred", _("Deferred (daily token budget)")
    EXTRACTED = "extracted", _("Extracted")
    SKIPPED = "skipped", _("Skipped (too little prose)")
    FAILED = "failed", _("Failed")


class Chunk(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "chk")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("user")
    )
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.PROTECT, related_name="chunks", verbose_name=_("scope")
    )
    created_by_token = models.ForeignKey(
        "scopes.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    source_kind = models.CharField(_("source"), max_length=16, choices=ChunkSource.choices)
    client = models.CharField(_("client"), max_length=120, blank=True, default="")
    conversation_id = models.CharField(_("conversation"), max_length=200, blank=True, default="")
    source_path = models.CharField(_("source path"), max_length=1000, blank=True, default="")
    chunk_hash = models.CharField(_("hash"), max_length=128)
    content = models.TextField(_("content (secrets redacted)"), blank=True, default="")
    content_chars = models.PositiveIntegerField(_("characters"), default=0)
    redactions = models.JSONField(_("redacted secrets"), default=list, blank=True)

    status = models.CharField(
        _("status"), max_length=16, choices=ChunkStatus.choices, default=ChunkStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    error = models.TextField(_("last error"), blank=True, default="")
    claim = models.CharField(max_length=64, blank=True, default="", editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)
    next_at = models.DateTimeField(_("next attempt"), null=True, blank=True)
    tokens_used = models.PositiveIntegerField(_("tokens used"), default=0)
    # Public ids of the memories the extraction wrote or was absorbed into.
    memory_ids = models.JSONField(_("memories"), default=list, blank=True)
    kept = models.PositiveSmallIntegerField(_("candidates kept"), default=0)
    # {"low_confidence": 2, "evidence_not_found": 1, ...}
    dropped = models.JSONField(_("candidates dropped"), default=dict, blank=True)

    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    extracted_at = models.DateTimeField(_("extracted"), null=True, blank=True)
    content_purged_at = models.DateTimeField(_("content purged"), null=True, blank=True)

    class Meta:
        verbose_name = _("chunk")
        verbose_name_plural = _("chunks")
        ordering = ["-public_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "scope", "chunk_hash"], name="chunk_one_per_scope_and_hash"
            )
        ]
        indexes = [
            models.Index(
                fields=["status", "next_at"],
                name="chunk_extraction_queue",
                condition=Q(status__in=["pending", "deferred"]),
            ),
            models.Index(fields=["user", "-public_id"], name="chunk_user_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} ({self.source_kind}, {self.status})"
