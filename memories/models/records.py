"""What hangs off a memory: its windows, provenance rows, versions, and idempotency records."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from memories.models.catalogue import EMBEDDING_DIMENSIONS, MemoryKind, SourceKind, cosine_hnsw
from memories.models.memory import Memory


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
            cosine_hnsw(name="window_embedding_hnsw"),
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
    # The captured chunk an extraction took this memory from (its evidence is `verbatim`).
    chunk = models.ForeignKey(
        "memories.Chunk", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The operative phrase exactly as said, in any language. Never translated.
    verbatim = models.TextField(_("verbatim"), blank=True, default="")
    # What this write said, when it differs from the memory's content (absorbed writes).
    written_text = models.TextField(_("text as written"), blank=True, default="")
    # Who wrote it, by name, where the user row is not this server's: an imported write keeps
    # its author's name here, and a deleted account's writes say "a deleted user".
    author_name = models.CharField(_("author"), max_length=150, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_token = models.ForeignKey(
        "scopes.ApiToken", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    # What a write said of itself that the server does not take as its own: an archive's id,
    # author and times on an import's row (never the memory's authority or time).
    claims = models.JSONField(_("claims"), default=dict, blank=True)

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
