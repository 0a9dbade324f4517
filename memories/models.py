"""Memories: canonical-English content with its original, provenance, versions and windows.

Memories are add-only. Nothing deletes one: forget and supersede set `valid` to False and record
why; restore sets it back.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField

from zeromemory.core.actor import Surface
from zeromemory.core.ids import new_public_id

EMBEDDING_DIMENSIONS = 384


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


class SourceKind(models.TextChoices):
    REMEMBER = "remember", _("Remember")
    INGEST = "ingest", _("Ingest")
    WATCHER = "watcher", _("Watcher")
    IMPORT = "import", _("Import")
    DASHBOARD = "dashboard", _("Dashboard")


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


class Memory(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "mem")
    )
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.PROTECT, related_name="memories", verbose_name=_("scope")
    )
    kind = models.ForeignKey(
        MemoryKind, on_delete=models.PROTECT, related_name="memories", verbose_name=_("kind")
    )
    content = models.TextField(_("content"))
    content_original = models.TextField(_("original text"), blank=True, default="")
    content_lang = models.CharField(_("language"), max_length=8, blank=True, default="")
    content_hash = models.CharField(max_length=64, editable=False)
    # Bumped on every edit of content; a translation started on an older revision is discarded.
    content_revision = models.PositiveIntegerField(default=1, editable=False)

    translation_status = models.CharField(
        _("translation"),
        max_length=16,
        choices=TranslationStatus.choices,
        default=TranslationStatus.SKIPPED,
    )
    translation_attempts = models.PositiveSmallIntegerField(_("translation attempts"), default=0)
    translation_error = models.TextField(_("last translation error"), blank=True, default="")
    # Earliest time of the next attempt (backoff); the claim and lease let exactly one worker
    # translate a memory at a time, and let the sweeper take over from a worker that died.
    translation_next_at = models.DateTimeField(null=True, blank=True, editable=False)
    translation_claim = models.CharField(max_length=36, blank=True, default="", editable=False)
    translation_lease_until = models.DateTimeField(null=True, blank=True, editable=False)

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

    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    valid = models.BooleanField(_("valid"), default=True)
    forgotten_at = models.DateTimeField(_("forgotten"), null=True, blank=True)
    forgotten_reason = models.TextField(_("reason"), blank=True, default="")
    forgotten_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("forgotten by"),
    )
    superseded_by = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="supersedes",
        verbose_name=_("superseded by"),
    )
    superseded_at = models.DateTimeField(null=True, blank=True)
    restored_at = models.DateTimeField(_("restored"), null=True, blank=True)
    restored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    recall_count = models.PositiveIntegerField(default=0, editable=False)

    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("memory")
        verbose_name_plural = _("memories")
        ordering = ["-public_id"]
        constraints = [
            # Two writes of the same normalized text into one scope make one valid memory,
            # even when they race.
            models.UniqueConstraint(
                fields=["scope", "content_hash"],
                condition=Q(valid=True),
                name="memory_one_valid_per_text",
            ),
        ]
        indexes = [
            HnswIndex(
                name="memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="memory_search_gin"),
            models.Index(fields=["scope", "valid", "-created_at"], name="memory_scope_recent"),
            models.Index(
                fields=["translation_status", "translation_next_at"],
                name="memory_translation_queue",
                condition=Q(translation_status="pending"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.public_id}: {self.content[:60]}"

    @property
    def has_original(self) -> bool:
        return bool(self.content_original)

    @property
    def state(self) -> MemoryState:
        if self.valid:
            return MemoryState.VALID
        return MemoryState.SUPERSEDED if self.superseded_by_id else MemoryState.FORGOTTEN


class MemoryWindow(models.Model):
    """An overlapping slice of a long memory, embedded on its own so text near the end is found."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="windows")
    position = models.PositiveSmallIntegerField()
    start_char = models.PositiveIntegerField()
    end_char = models.PositiveIntegerField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)

    class Meta:
        ordering = ["memory_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "position"], name="window_unique_position")
        ]
        indexes = [
            HnswIndex(
                name="window_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return f"window {self.position} of memory {self.memory_id}"


class Provenance(models.Model):
    """One row per write that created a memory or was absorbed into one."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="provenance")
    source_kind = models.CharField(_("source"), max_length=16, choices=SourceKind.choices)
    absorbed = models.BooleanField(_("absorbed by deduplication"), default=False)
    client_name = models.CharField(_("client or agent"), max_length=120, blank=True, default="")
    conversation_id = models.CharField(_("conversation"), max_length=200, blank=True, default="")
    source_path = models.CharField(_("source path"), max_length=1000, blank=True, default="")
    chunk_hash = models.CharField(_("chunk hash"), max_length=128, blank=True, default="")
    # The operative phrase exactly as said, in any language. Never translated.
    verbatim = models.TextField(_("verbatim"), blank=True, default="")
    # What this write said, when it differs from the memory's content (absorbed writes).
    written_text = models.TextField(_("text as written"), blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_token = models.ForeignKey(
        "scopes.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        verbose_name = _("provenance")
        verbose_name_plural = _("provenance")
        ordering = ["memory_id", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.source_kind} by {self.client_name or self.created_by_id}"


class MemoryVersion(models.Model):
    """An earlier text or kind of a memory, kept whenever a person or agent edits it."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.ForeignKey(MemoryKind, on_delete=models.PROTECT, related_name="+")
    content = models.TextField()
    content_original = models.TextField(blank=True, default="")
    content_lang = models.CharField(max_length=8, blank=True, default="")
    edited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["memory_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "number"], name="version_unique_number")
        ]

    def __str__(self) -> str:
        return f"version {self.number} of memory {self.memory_id}"


class IdempotencyRecord(models.Model):
    """The first answer to a write sent with an idempotency key, replayed on retries.

    A replay answers only a memory the caller may read now; when it cannot (a token restricted
    to other scopes, a member removed since), the key counts as unknown and this record is
    replaced by the answer to the new write.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    # sha256 of the request the key first answered; the same key with another request conflicts.
    fingerprint = models.CharField(max_length=64, blank=True, default="")
    status = models.PositiveSmallIntegerField()
    answer = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_unique_key")
        ]

    def __str__(self) -> str:
        return self.key


class ActivityOperation(models.TextChoices):
    RECALL = "recall", _("Recall")
    BUILD_CONTEXT = "build_context", _("Build context")
    BRIEFING = "briefing", _("Briefing")
    REMEMBER = "remember", _("Remember")


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
    query = models.TextField(_("query"), blank=True, default="")
    # Other inputs that shaped the answer (k, kinds, max_tokens).
    options = models.JSONField(_("options"), default=dict, blank=True)
    # [{"id": <memory public id>, "score": <float or null>}, ...] in answer order.
    results = models.JSONField(_("results"), default=list, blank=True)
    latency_ms = models.FloatField(_("latency (ms)"))
    outcome = models.CharField(_("outcome"), max_length=8, choices=ActivityOutcome.choices)
    error_code = models.CharField(_("error code"), max_length=32, blank=True, default="")
    # Memories this answer handed out whose recall_count has not been bumped yet. A scheduled
    # task adds them up in batches: bumping counts inline made every recall a write to ten
    # random memory rows (slow, and churn in their indexes), for a figure briefings read.
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
        ]

    def __str__(self) -> str:
        return f"{self.operation} by {self.user_id} ({self.outcome})"
