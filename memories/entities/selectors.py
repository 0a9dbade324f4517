"""Reads of entities, through the access module: an entity of a scope one cannot read does not
exist for them (404), one of a scope one may read but not change is forbidden (403)."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext as _

from memories.models import Entity
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound


def readable_entities(actor: Actor) -> QuerySet[Entity]:
    return Entity.objects.filter(scope__in=access.readable_scopes(actor))


def entity_for_read(*, actor: Actor, public_id: str) -> Entity:
    entity = readable_entities(actor).select_related("scope").filter(public_id=public_id).first()
    if entity is None:
        raise NotFound(_("No such entity."))
    return entity


def entity_for_write(*, actor: Actor, public_id: str) -> Entity:
    """An entity whose scope the actor may write (aliases)."""
    entity = entity_for_read(actor=actor, public_id=public_id)
    access.writable_scope(actor, entity.scope.public_id)
    return entity


def entity_for_admin(*, actor: Actor, public_id: str) -> Entity:
    """An entity whose scope the actor administers (merges and splits, and their undoing)."""
    entity = entity_for_read(actor=actor, public_id=public_id)
    access.administrable_scope(actor, entity.scope.public_id)
    return entity
