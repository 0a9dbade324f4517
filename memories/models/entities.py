"""What memories are about: entities of a scope, their aliases, the memories that mention them,
and the merges and splits that reshaped them.

An entity belongs to one scope and has a kind and a canonical name. Every name it answers to,
the canonical one included, is an `EntityAlias` row whose `normalized` form is unique in the
scope, so one indexed lookup resolves any name (case-insensitively) to one entity. Merges and
splits are add-only: each is a row saying who did it, when and what it moved, and undoing it
marks the row undone instead of deleting it. A merged entity keeps its aliases and mentions;
`merged_into` points at the survivor while the merge stands, and resolution follows it.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memories.models.memory import Memory
from zeromemory.core.ids import new_public_id

ENTITY_NAME_MAX_CHARS = 200


class EntityKind(models.TextChoices):
    PERSON = "person", _("Person")
    TEAM = "team", _("Team")
    SERVICE = "service", _("Service")
    REPOSITORY = "repository", _("Repository")
    PATH = "path", _("File or path")
    TOOL = "tool", _("Library or tool")
    PRODUCT = "product", _("Product")
    ORGANISATION = "organisation", _("Organisation")
    PLACE = "place", _("Place")
    EVENT = "event", _("Named event")
    # What the detector finds by shape, before anyone says more about it.
    URL = "url", _("URL")
    HANDLE = "handle", _("Handle")
    TICKET = "ticket", _("Ticket")
    IDENTIFIER = "identifier", _("Identifier (code)")
    # A proper name whose kind nobody has said yet.
    NAME = "name", _("Name")


class MentionSource(models.TextChoices):
    DETECTED = "detected", _("Detected on write")
    AGENT = "agent", _("Given by the writer")
    EXTRACTOR = "extractor", _("Extractor")
    TRANSLATOR = "translator", _("Translator")
    IMPORT = "import", _("Archive import")


class Entity(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "ent")
    )
    scope = models.ForeignKey(
        "scopes.Scope", on_delete=models.CASCADE, related_name="entities", verbose_name=_("scope")
    )
    kind = models.CharField(_("kind"), max_length=16, choices=EntityKind.choices)
    name = models.CharField(_("name"), max_length=ENTITY_NAME_MAX_CHARS)
    # The survivor of the merge that absorbed this entity, while that merge stands (the merge
    # itself is an `EntityMerge` row; this is its current effect, for resolution in one hop).
    merged_into = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="merged"
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        verbose_name = _("entity")
        verbose_name_plural = _("entities")
        ordering = ["scope_id", "name"]
        indexes = [models.Index(fields=["scope", "kind"], name="entity_scope_kind")]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class EntityAlias(models.Model):
    """A name an entity answers to in its scope; `normalized` (see `entities.names`) is unique
    per scope, so a name never resolves to two entities."""

    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="aliases")
    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    alias = models.CharField(_("alias"), max_length=ENTITY_NAME_MAX_CHARS)
    normalized = models.CharField(max_length=ENTITY_NAME_MAX_CHARS)
    source = models.CharField(max_length=16, choices=MentionSource.choices)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("entity alias")
        verbose_name_plural = _("entity aliases")
        ordering = ["entity_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "normalized"], name="entity_alias_unique_in_scope"
            )
        ]

    def __str__(self) -> str:
        return self.alias


class EntityMention(models.Model):
    """A memory is about an entity: found in its text, given by its writer, or by an LLM pass."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="mentions")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="mentions")
    source = models.CharField(max_length=16, choices=MentionSource.choices)
    # The words the memory used (for a split: which mentions go with which alias).
    surface = models.CharField(max_length=ENTITY_NAME_MAX_CHARS, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["memory_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["memory", "entity", "source"], name="entity_mention_unique"
            )
        ]
        indexes = [models.Index(fields=["entity", "memory"], name="entity_mention_by_entity")]

    def __str__(self) -> str:
        return f"memory {self.memory_id} mentions entity {self.entity_id} ({self.source})"


class EntityMerge(models.Model):
    """`merged` was folded into `survivor` (its aliases and mentions now resolve there) until the
    merge is undone."""

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    merged = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    survivor = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["scope_id", "-at", "-id"]
        constraints = [
            # An entity is folded into one survivor at a time.
            models.UniqueConstraint(
                fields=["merged"], condition=Q(undone_at__isnull=True), name="entity_merge_one_open"
            )
        ]

    def __str__(self) -> str:
        return f"entity {self.merged_id} merged into {self.survivor_id}"


class EntitySplit(models.Model):
    """Some aliases of `source`, and the mentions made by those names, moved to `created` (a new
    entity) until the split is undone; the ids moved are kept so the undo moves exactly them."""

    scope = models.ForeignKey("scopes.Scope", on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    created = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="+")
    alias_ids = models.JSONField(default=list)
    mention_ids = models.JSONField(default=list)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["scope_id", "-at", "-id"]

    def __str__(self) -> str:
        return f"entity {self.created_id} split from {self.source_id}"
