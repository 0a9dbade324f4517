"""A typed link between two memories of one scope: one depends on, was caused by, is an example
of, or relates to another.

Links are add-only like memories: removing one sets `removed_at` and `removed_by` and keeps the
row, so a memory's history shows when a link was made and when it was taken back. At most one
live link of a type joins two memories in one direction (a second identical write is the same
link). Supersession and contradiction are not links: hygiene records them
(`Memory.superseded_by`, `Conflict`), and the answers show them beside the links.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memories.models.catalogue import AuthorKind
from memories.models.memory import Memory
from zeromemory.core.ids import new_public_id


class LinkType(models.TextChoices):
    """What the source memory says of the target, read `source <type> target`."""

    RELATES_TO = "relates_to", _("relates to")
    DEPENDS_ON = "depends_on", _("depends on")
    CAUSED_BY = "caused_by", _("caused by")
    EXAMPLE_OF = "example_of", _("example of")


class MemoryLink(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "lnk")
    )
    # Both ends live in this scope (`memories.entities.links`): whoever reads one end reads the
    # other, so a link never names a memory its reader cannot see.
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.PROTECT, related_name="+", verbose_name=_("scope")
    )
    source = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="links_out", verbose_name=_("from")
    )
    target = models.ForeignKey(
        Memory, on_delete=models.PROTECT, related_name="links_in", verbose_name=_("to")
    )
    link_type = models.CharField(_("type"), max_length=16, choices=LinkType.choices)

    # Who wrote it, from the credential (as for a memory): a person, an agent or capture.
    author_kind = models.CharField(_("author"), max_length=16, choices=AuthorKind.choices)
    agent_name = models.CharField(_("agent or client"), max_length=120, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_by_token = models.ForeignKey(
        "scopes.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    removed_at = models.DateTimeField(_("removed"), null=True, blank=True)
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("removed by"),
    )

    class Meta:
        verbose_name = _("memory link")
        verbose_name_plural = _("memory links")
        ordering = ["created_at", "id"]
        constraints = [
            # The same live link written twice (even by two racing writers) is one link.
            models.UniqueConstraint(
                fields=["source", "target", "link_type"],
                condition=Q(removed_at__isnull=True),
                name="memory_link_one_live",
            ),
            models.CheckConstraint(
                condition=~Q(source=F("target")), name="memory_link_not_to_itself"
            ),
        ]
        indexes = [
            models.Index(fields=["source", "created_at"], name="memory_link_from"),
            models.Index(fields=["target", "created_at"], name="memory_link_to"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id}: {self.source_id} {self.link_type} {self.target_id}"

    @property
    def live(self) -> bool:
        return self.removed_at is None
