"""What export, import of an export and purge keep: the import ledger, single-use download
tickets, dashboard exports prepared in the background, and the purge audit.

The ledger maps a memory id found in an imported archive to the memory the import wrote, per
scope, so a second import of the same archive finds every memory already there and writes
nothing. A ticket is the server side of a signed, short-lived download URL: its use is recorded
so the URL works once. An export job is a zip the worker writes to a file for a person on the
dashboard, with its progress; its download is recorded so it works once. A purge row says who
purged which memory, when and why, and nothing of what the memory said.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memories.models.memory import Memory
from zeromemory.core.ids import new_public_id


class ImportedMemory(models.Model):
    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    # The memory's id in the archive (on the server it was exported from).
    origin_id = models.CharField(max_length=40)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "origin_id"], name="imported_once_per_scope")
        ]

    def __str__(self) -> str:
        return f"{self.origin_id} → {self.memory_id}"


class ExportTicket(models.Model):
    """A download of an export, issued to a user (and the token it used) for some scopes."""

    public_id = models.CharField(
        max_length=40, unique=True, editable=False, default=partial(new_public_id, "exp")
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    token = models.ForeignKey(
        "scopes.ApiToken", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # Public ids of the scopes the download holds; checked again when it is used.
    scopes = models.JSONField(default=list)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.public_id


class ExportJobStatus(models.TextChoices):
    RUNNING = "running", _("running")
    READY = "ready", _("ready")
    FAILED = "failed", _("failed")
    DOWNLOADED = "downloaded", _("downloaded")


class ExportJob(models.Model):
    """An export of one scope for a person on the dashboard, written to a file by the worker."""

    public_id = models.CharField(
        max_length=40, unique=True, editable=False, default=partial(new_public_id, "exj")
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        max_length=12, choices=ExportJobStatus.choices, default=ExportJobStatus.RUNNING
    )
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    # The file and the row go at this time, whatever state the job is in.
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.public_id


class PurgeRecord(models.Model):
    """The audit of one purge: the memory's id and scope, who, when and why; no content."""

    memory_public_id = models.CharField(_("memory"), max_length=40, db_index=True)
    scope_public_id = models.CharField(_("scope"), max_length=40)
    purged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name=_("purged by"),
    )
    reason = models.TextField(_("reason"))
    purged_at = models.DateTimeField(_("purged"), default=timezone.now)

    class Meta:
        verbose_name = _("purge")
        verbose_name_plural = _("purges")
        ordering = ["-purged_at", "-id"]

    def __str__(self) -> str:
        return f"purge of {self.memory_public_id}"
