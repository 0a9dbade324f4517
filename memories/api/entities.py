"""REST endpoints of a scope's entities (`/api/v1/entities…`): search, describe one, and the
admin's reshaping (aliases for writers; merges, splits and their undoing for admins). Thin:
obtain the entities through the selectors (the access module), call a service, shape the answer.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.views import APIView

from memories.entities import selectors, services
from memories.models import EntityKind, EntityMerge
from memories.schemas import (
    EntityAliasOut,
    EntityDetailOut,
    EntityOut,
    EntityPageOut,
    EntityReshapeOut,
)
from zeromemory.core.actor import actor_for_request
from zeromemory.core.errors import NotFound
from zeromemory.core.rendering import render
from zeromemory.core.serializers import PagedQuery, StrictCharField, StrictSerializer

NAME_MAX = 200


def merge_out(merge: EntityMerge) -> EntityReshapeOut:
    return EntityReshapeOut.of_merge(merge)


def split_out(split) -> EntityReshapeOut:
    return EntityReshapeOut.of_split(split, aliases=selectors.split_aliases(split))


class EntityListView(APIView):
    class Filters(PagedQuery):
        q = StrictCharField(required=False, max_length=NAME_MAX, allow_blank=True, default="")
        kind = serializers.ChoiceField(choices=EntityKind.choices, required=False, default="")
        scope = StrictCharField(required=False, max_length=40, default="")

    @extend_schema(
        parameters=[Filters],
        responses=EntityPageOut,
        operation_id="v1_entities_list",
        summary="Search readable entities by name or alias, kind and scope (newest first)",
    )
    def get(self, request):
        actor = actor_for_request(request)
        data, page = self.Filters.read(request.query_params)
        found, next_cursor = selectors.entity_search(
            actor=actor, query=data["q"], kind=data["kind"], scope_id=data["scope"], page=page
        )
        results = [EntityOut.of(entity, memories=entity.memory_count) for entity in found]
        return render(EntityPageOut(results=results, next_cursor=next_cursor))


class EntityDetailView(APIView):
    @extend_schema(
        parameters=[PagedQuery],
        responses=EntityDetailOut,
        operation_id="v1_entities_retrieve",
        summary="An entity: its memories newest first (paged), neighbours and timeline",
    )
    def get(self, request, entity_id: str):
        actor = actor_for_request(request)
        entity = selectors.entity_for_read(actor=actor, public_id=entity_id)
        _, page = PagedQuery.read(request.query_params)
        description = selectors.entity_description(actor=actor, entity=entity, page=page)
        return render(EntityDetailOut.of(description, aliases=selectors.entity_aliases(entity)))


class EntityAliasView(APIView):
    @extend_schema_serializer(component_name="EntityAliasCreate")
    class Input(StrictSerializer):
        alias = StrictCharField(max_length=NAME_MAX)

    @extend_schema(
        request=Input,
        responses={201: EntityAliasOut},
        summary="Give an entity another name (writers; a name another entity holds: 409)",
    )
    def post(self, request, entity_id: str):
        actor = actor_for_request(request)
        entity = selectors.entity_for_write(actor=actor, public_id=entity_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        alias = services.entity_alias_add(
            actor=actor, entity=entity, alias=body.validated_data["alias"]
        )
        answer = EntityAliasOut(
            entity=entity.public_id, alias=alias.alias, created_at=alias.created_at
        )
        return render(answer, status=status.HTTP_201_CREATED)


class EntityMergeView(APIView):
    @extend_schema_serializer(component_name="EntityMergeCreate")
    class Input(StrictSerializer):
        into = StrictCharField(max_length=40)

    @extend_schema(
        request=Input,
        responses={201: EntityReshapeOut},
        summary="Merge this entity into another of its scope (admins; add-only, undoable)",
    )
    def post(self, request, entity_id: str):
        actor = actor_for_request(request)
        merged = selectors.entity_for_admin(actor=actor, public_id=entity_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            survivor = selectors.entity_for_read(actor=actor, public_id=body.validated_data["into"])
        except NotFound as exc:
            raise exc.naming("into") from None
        merge = services.entity_merge(actor=actor, merged=merged, survivor=survivor)
        return render(merge_out(merge), status=status.HTTP_201_CREATED)


class EntityMergeUndoView(APIView):
    @extend_schema(
        request=None,
        responses={200: EntityReshapeOut},
        summary="Undo the merge that folded this entity (admins; the merge's row stays)",
    )
    def post(self, request, entity_id: str):
        actor = actor_for_request(request)
        merge = selectors.open_merge_of(actor=actor, public_id=entity_id)
        return render(merge_out(services.entity_merge_undo(actor=actor, merge=merge)))


class EntitySplitView(APIView):
    @extend_schema_serializer(component_name="EntitySplitCreate")
    class Input(StrictSerializer):
        aliases = serializers.ListField(
            child=StrictCharField(max_length=NAME_MAX), min_length=1, max_length=50
        )
        name = StrictCharField(max_length=NAME_MAX)
        kind = serializers.ChoiceField(choices=EntityKind.choices, required=False)

    @extend_schema(
        request=Input,
        responses={201: EntityReshapeOut},
        summary="Split some names of this entity off into a new one (admins; undoable)",
    )
    def post(self, request, entity_id: str):
        actor = actor_for_request(request)
        entity = selectors.entity_for_admin(actor=actor, public_id=entity_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        split = services.entity_split(
            actor=actor,
            entity=entity,
            aliases=data["aliases"],
            name=data["name"],
            kind=data.get("kind"),
        )
        return render(split_out(split), status=status.HTTP_201_CREATED)


class EntitySplitUndoView(APIView):
    @extend_schema(
        request=None,
        responses={200: EntityReshapeOut},
        summary="Undo the split that made this entity (admins; the split's row stays)",
    )
    def post(self, request, entity_id: str):
        actor = actor_for_request(request)
        split = selectors.split_that_made(actor=actor, public_id=entity_id)
        return render(split_out(services.entity_split_undo(actor=actor, split=split)))
