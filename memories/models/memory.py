"""A memory: canonical-English content with its original, and its state.

Memories are add-only. Nothing deletes one: forget and supersede end its validity and record
why; restore opens it again. Each stretch of time a memory was valid is a `ValidityPeriod` row;
the memory keeps their outer bounds (`valid_from`, `valid_until`) and whether there is a gap
between them, so a read "as of" an instant filters on its own row and looks at the periods only
for the few memories that were forgotten or superseded and then restored. `valid` is derived
from those bounds by PostgreSQL (a generated column): valid now when it has been valid and its
last period is still open. Nothing writes it.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import ExpressionWrapper, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from memories.models.catalogue import (
    EMBEDDING_DIMENSIONS,
    AuthorKind,
    MemoryKind,
    MemoryState,
    TranslationStatus,
)
from zeromemory.core.ids import new_public_id


class Memory(models.Model):
    # Each index is written with every new memory. public_id is unique by a constraint in Meta
    # (a field's own index on a text column comes with a second one, for LIKE, that nothing
    # here asks), and the foreign keys below that say db_index=False are indexed there.
    public_id = models.CharField(
        _("id"), max_length=40, editable=False, default=partial(new_public_id, "mem")
    )
    scope = models.ForeignKey(
        "scopes.Scope",
        on_delete=models.PROTECT,
        related_name="memories",
        verbose_name=_("scope"),
        db_index=False,  # memory_scope_recent starts with it
    )
    kind = models.ForeignKey(
        MemoryKind,
        on_delete=models.PROTECT,
        related_name="memories",
        verbose_name=_("kind"),
        db_index=False,
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

    # Derived from the validity bounds below; PostgreSQL computes it on every write. Django does
    # not read it back after an UPDATE: a service that changes the bounds refreshes it.
    valid = models.GeneratedField(
        expression=ExpressionWrapper(
            Q(valid_from__isnull=False, valid_until__isnull=True),
            output_field=models.BooleanField(),
        ),
        output_field=models.BooleanField(),
        db_persist=True,
        verbose_name=_("valid"),
    )
    forgotten_at = models.DateTimeField(_("forgotten"), null=True, blank=True)
    forgotten_reason = models.TextField(_("reason"), blank=True, default="")
    forgotten_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("forgotten by"),
        db_index=False,
    )
    superseded_by = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="supersedes",
        verbose_name=_("superseded by"),
        db_index=False,
    )
    superseded_at = models.DateTimeField(null=True, blank=True)
    restored_at = models.DateTimeField(_("restored"), null=True, blank=True)
    restored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    recall_count = models.PositiveIntegerField(default=0, editable=False)
    # The outer bounds of the validity periods: the start of the first (None: never valid, e.g.
    # held back by capture; a new memory is valid from when it is made) and the end of the last
    # (None while valid); `validity_gaps` when there is more than one period, i.e. a time between
    # them when the memory was not valid.
    valid_from = models.DateTimeField(
        _("valid from"), null=True, blank=True, editable=False, default=timezone.now
    )
    valid_until = models.DateTimeField(_("valid until"), null=True, blank=True, editable=False)
    validity_gaps = models.BooleanField(default=False, editable=False)
    # Ageing: the last time a write said the same again, an edit or a restore confirmed the
    # memory, and the last time a recall handed it out (folded from the activity log).
    confirmed_at = models.DateTimeField(_("confirmed"), null=True, blank=True, editable=False)
    last_recalled_at = models.DateTimeField(
        _("last recalled"), null=True, blank=True, editable=False
    )

    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("memory")
        verbose_name_plural = _("memories")
        ordering = ["-public_id"]
        constraints = [
            models.UniqueConstraint(fields=["public_id"], name="memory_public_id_unique"),
            # Two writes of the same normalized text into one scope make one valid memory,
            # even when they race.
            models.UniqueConstraint(
                fields=["scope", "content_hash"],
                condition=Q(valid=True),
                name="memory_one_valid_per_text",
            ),
        ]
        # The embedding's HNSW and the text's GIN index are on the search copy
        # (memories.models.search), partitioned by scope: recall reads them there.
        indexes = [
            models.Index(fields=["scope", "valid", "-created_at"], name="memory_scope_recent"),
            models.Index(fields=["kind"], name="memory_kind"),
            # Who forgot, restored or superseded a memory is rarely set: only those rows, for
            # the foreign keys' own lookups (a user or memory deleted).
            *(
                models.Index(
                    fields=[column],
                    name=f"memory_{column}",
                    condition=Q(**{f"{column}__isnull": False}),
                )
                for column in ("forgotten_by", "restored_by", "superseded_by")
            ),
            # The sections of context and briefings by kind (recent decisions, open loops): the
            # rows of those kinds only, however many episodes or facts the scopes hold.
            models.Index(
                fields=["kind", "scope", "-created_at"],
                name="memory_kind_recent",
                condition=Q(valid=True),
            ),
            # The briefing's candidates besides each kind's newest: the memories ever recalled,
            # whose recall boost can lift them past newer ones (memories.recall.sections).
            models.Index(
                fields=["scope"],
                name="memory_recalled",
                condition=Q(valid=True, recall_count__gt=0),
            ),
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
