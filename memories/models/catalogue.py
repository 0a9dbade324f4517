"""The catalogues memories refer to: kinds (a table staff edit), and the fixed choices."""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex

from zeromemory.core.actor import AGENT_RANK, CAPTURE_RANK, HUMAN_RANK, Actor, Surface

EMBEDDING_DIMENSIONS = 384


def cosine_hnsw(*, name: str) -> HnswIndex:
    """The HNSW index of an `embedding` column searched by cosine distance: one set of build
    parameters for every table recall and dedup search (memories' search copy, windows)."""
    return HnswIndex(
        name=name, fields=["embedding"], m=16, ef_construction=64, opclasses=["vector_cosine_ops"]
    )


class MemoryKind(models.Model):
    """The catalogue of kinds; recall weighs and decays memories by their kind."""

    slug = models.SlugField(_("slug"), max_length=32, primary_key=True)
    label = models.CharField(_("label"), max_length=80)
    description = models.TextField(_("description"), blank=True)
    weight = models.FloatField(_("ranking weight"), default=1.0)
    half_life_days = models.PositiveIntegerField(_("half-life in days"), default=365)
    position = models.PositiveSmallIntegerField(_("position"), default=0)

    class Meta:
        verbose_name = _("memory kind")
        verbose_name_plural = _("memory kinds")
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.label


class TranslationStatus(models.TextChoices):
    SKIPPED = "skipped", _("Skipped (English or no prose)")
    PENDING = "pending", _("Pending")
    DONE = "done", _("Translated")
    FAILED = "failed", _("Failed")


class AuthorKind(models.TextChoices):
    HUMAN = "human", _("Human")
    AGENT = "agent", _("Agent")
    WATCHER = "watcher", _("Watcher")
    CAPTURE = "capture", _("Capture (extraction, import)")


# The authority of each author kind, for hygiene's decisions and for what a writer may claim.
AUTHOR_RANKS = {
    AuthorKind.HUMAN: HUMAN_RANK,
    AuthorKind.AGENT: AGENT_RANK,
    AuthorKind.WATCHER: CAPTURE_RANK,
    AuthorKind.CAPTURE: CAPTURE_RANK,
}


def authenticated_author_kind(actor: Actor) -> str:
    """The authority a write has, from how its caller authenticated and never from a field it
    sends: a session is a person, a token an agent, capture (extraction, import) is capture."""
    if actor.surface == Surface.CAPTURE:
        return AuthorKind.CAPTURE
    return AuthorKind.HUMAN if actor.token is None else AuthorKind.AGENT


class SourceKind(models.TextChoices):
    REMEMBER = "remember", _("Remember")
    INGEST = "ingest", _("Ingest")
    WATCHER = "watcher", _("Watcher")
    IMPORT = "import", _("Import")
    DASHBOARD = "dashboard", _("Dashboard")
    EXTRACTION = "extraction", _("Extraction")


class MemoryState(models.TextChoices):
    """Derived from `valid` and `superseded_by`: nothing is deleted, a memory only changes state."""

    VALID = "valid", _("Valid")
    FORGOTTEN = "forgotten", _("Forgotten")
    SUPERSEDED = "superseded", _("Superseded")

    @property
    def condition(self) -> Q:
        """The filter that selects memories in this state."""
        return {
            MemoryState.VALID: Q(valid=True),
            MemoryState.FORGOTTEN: Q(valid=False, superseded_by__isnull=True),
            MemoryState.SUPERSEDED: Q(valid=False, superseded_by__isnull=False),
        }[self]
