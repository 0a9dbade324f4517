"""The periods a memory was valid: one row per stretch, from its write or a restore to its forget
or supersession (open while it is valid). Forget then restore leaves two rows and a gap."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from memories.models.memory import Memory


class ValidityStart(models.TextChoices):
    CREATED = "created", _("Written")
    RESTORED = "restored", _("Restored")


class ValidityEnd(models.TextChoices):
    FORGOTTEN = "forgotten", _("Forgotten")
    SUPERSEDED = "superseded", _("Superseded")


class ValidityPeriod(models.Model):
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="validity_periods")
    valid_from = models.DateTimeField(_("valid from"))
    valid_until = models.DateTimeField(_("valid until"), null=True, blank=True)
    started = models.CharField(max_length=16, choices=ValidityStart.choices)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    ended = models.CharField(max_length=16, choices=ValidityEnd.choices, blank=True, default="")
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The memory that superseded this one, kept after a restore clears `superseded_by`.
    replaced_by = models.ForeignKey(
        Memory, on_delete=models.PROTECT, null=True, blank=True, related_name="replaced_periods"
    )

    class Meta:
        verbose_name = _("validity period")
        verbose_name_plural = _("validity periods")
        ordering = ["memory_id", "valid_from", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["memory"],
                condition=Q(valid_until__isnull=True),
                name="validity_one_open_period",
            ),
        ]
        indexes = [models.Index(fields=["memory", "valid_from"], name="validity_memory_from")]

    def __str__(self) -> str:
        return f"memory {self.memory_id} valid {self.valid_from:%Y-%m-%d} to {self.valid_until}"
