"""Writes of entities: aliases, merges and splits, each add-only and undoable.

A merge folds one entity into another: a row records who and when, the folded entity keeps its
aliases and mentions, and resolution follows it to the survivor until the merge is undone. A
split moves some aliases of an entity (and the mentions made by those names) to a new entity; a
row records exactly which, so undoing it moves exactly them back. Nothing is deleted.

As everywhere, the caller obtains the entities through `selectors` (the access module decides
who may), and these services trust what they are given.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.entities.given import given_entities
from memories.entities.names import name_key
from memories.models import (
    Entity,
    EntityAlias,
    EntityKind,
    EntityMention,
    EntityMerge,
    EntitySplit,
    MentionSource,
)
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets


def _alias_key(alias: str, field: str = "alias") -> tuple[str, str]:
    """The name as stored and its key; a name holding a secret is refused (nothing stored)."""
    [given] = given_entities([alias], field=field)
    refuse_secrets({field: given.name})
    return given.name, name_key(given.name)


def entity_alias_add(*, actor: Actor, entity: Entity, alias: str) -> EntityAlias:
    """Another name of `entity` in its scope ("billing-svc" for the billing service). A name
    that already belongs to another entity is a conflict: merge the two instead."""
    text, key = _alias_key(alias)
    existing = EntityAlias.objects.filter(scope_id=entity.scope_id, normalized=key).first()
    if existing is not None:
        if existing.entity_id == entity.id:
            return existing
        raise ConflictError(
            _("This name already belongs to another entity of the scope; merge them instead."),
            details={"alias": [_("Taken by another entity.")]},
        )
    try:
        with transaction.atomic():
            return EntityAlias.objects.create(
                entity=entity,
                scope_id=entity.scope_id,
                alias=text,
                normalized=key,
                source=MentionSource.AGENT,
                created_by=actor.user,
            )
    except IntegrityError:  # a concurrent write took the name first
        raise ConflictError(
            _("This name already belongs to another entity of the scope; merge them instead."),
            details={"alias": [_("Taken by another entity.")]},
        ) from None


def _current(entity: Entity) -> Entity:
    while entity.merged_into_id is not None:
        entity = Entity.objects.get(pk=entity.merged_into_id)
    return entity


def entity_merge(*, actor: Actor, merged: Entity, survivor: Entity) -> EntityMerge:
    """Fold `merged` into `survivor` (both of one scope): its names and mentions resolve to the
    survivor from now on, until `entity_merge_undo`."""
    with transaction.atomic():
        merged = Entity.objects.select_for_update().get(pk=merged.pk)
        survivor = _current(survivor)
        if merged.scope_id != survivor.scope_id:
            raise ValidationFailed("survivor", _("Both entities must be in the same scope."))
        if merged.merged_into_id is not None:
            raise ConflictError(
                _("This entity is already merged into another; undo that merge first."),
                details={"entity": [_("Already merged.")]},
            )
        if merged.id == survivor.id:
            raise ValidationFailed("survivor", _("An entity cannot be merged into itself."))
        merged.merged_into = survivor
        merged.save(update_fields=["merged_into"])
        return EntityMerge.objects.create(
            scope_id=merged.scope_id, merged=merged, survivor=survivor, by=actor.user
        )


def entity_merge_undo(*, actor: Actor, merge: EntityMerge) -> EntityMerge:
    """Undo a merge: the folded entity answers to its own names again; the merge's row stays,
    marked undone."""
    with transaction.atomic():
        merge = EntityMerge.objects.select_for_update().get(pk=merge.pk)
        if merge.undone_at is not None:
            raise ConflictError(
                _("This merge is already undone."), details={"merge": [_("Already undone.")]}
            )
        Entity.objects.filter(pk=merge.merged_id, merged_into_id=merge.survivor_id).update(
            merged_into=None
        )
        merge.undone_at, merge.undone_by = timezone.now(), actor.user
        merge.save(update_fields=["undone_at", "undone_by"])
        return merge


def entity_split(
    *, actor: Actor, entity: Entity, aliases: list[str], name: str, kind: str | None = None
) -> EntitySplit:
    """Move `aliases` of `entity` (and the mentions made by those names) to a new entity called
    `name`: for two things one name was wrongly taken to mean."""
    if kind is not None and kind not in EntityKind.values:
        raise ValidationFailed("kind", _("Unknown entity kind."))
    name, new_key = _alias_key(name, field="name")
    keys = {_alias_key(alias, field="aliases")[1] for alias in aliases}
    with transaction.atomic():
        entity = Entity.objects.select_for_update().get(pk=entity.pk)
        moving = list(EntityAlias.objects.filter(entity=entity, normalized__in=keys))
        if not moving or len(moving) != len(keys):
            raise ValidationFailed("aliases", _("Name aliases of this entity to move."))
        if len(moving) == entity.aliases.count():
            raise ValidationFailed("aliases", _("Leave the entity at least one of its names."))
        if (
            new_key not in keys
            and EntityAlias.objects.filter(scope_id=entity.scope_id, normalized=new_key).exists()
        ):
            raise ValidationFailed("name", _("This name already belongs to an entity."))
        created = Entity.objects.create(
            scope_id=entity.scope_id, kind=kind or entity.kind, name=name
        )
        if new_key not in keys:
            EntityAlias.objects.create(
                entity=created,
                scope_id=entity.scope_id,
                alias=name,
                normalized=new_key,
                source=MentionSource.AGENT,
                created_by=actor.user,
            )
        mentions = [
            mention.id
            for mention in EntityMention.objects.filter(entity=entity).only("id", "surface")
            if name_key(mention.surface) in keys
        ]
        EntityAlias.objects.filter(id__in=[alias.id for alias in moving]).update(entity=created)
        EntityMention.objects.filter(id__in=mentions).update(entity=created)
        if entity.name and name_key(entity.name) in keys:
            # The entity's own name went with the split: it takes the name of a name it kept.
            kept = EntityAlias.objects.filter(entity=entity).order_by("id").first()
            entity.name = kept.alias
            entity.save(update_fields=["name"])
        return EntitySplit.objects.create(
            scope_id=entity.scope_id,
            source=entity,
            created=created,
            alias_ids=[alias.id for alias in moving],
            mention_ids=mentions,
            by=actor.user,
        )


def entity_split_undo(*, actor: Actor, split: EntitySplit) -> EntitySplit:
    """Undo a split: the aliases and mentions it moved go back; the entity it made stays, with
    whatever was added to it since, and the split's row stays, marked undone."""
    with transaction.atomic():
        split = EntitySplit.objects.select_for_update().get(pk=split.pk)
        if split.undone_at is not None:
            raise ConflictError(
                _("This split is already undone."), details={"split": [_("Already undone.")]}
            )
        EntityAlias.objects.filter(id__in=split.alias_ids, entity_id=split.created_id).update(
            entity_id=split.source_id
        )
        # A mention the source already has again (the same memory, entity and source) stays.
        for mention in EntityMention.objects.filter(
            id__in=split.mention_ids, entity_id=split.created_id
        ):
            if not EntityMention.objects.filter(
                memory_id=mention.memory_id, entity_id=split.source_id, source=mention.source
            ).exists():
                mention.entity_id = split.source_id
                mention.save(update_fields=["entity"])
        split.undone_at, split.undone_by = timezone.now(), actor.user
        split.save(update_fields=["undone_at", "undone_by"])
        return split
