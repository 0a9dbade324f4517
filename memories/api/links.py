"""REST endpoints of a memory's typed links (`/api/v1/memories/{id}/links…`). Thin: obtain the
memories through the selectors (the access module), call a service, shape the answer."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.views import APIView

from memories import selectors
from memories.entities import links
from memories.schemas import MemoryLinkOut, MemoryLinksOut
from zeromemory.core.actor import actor_for_request
from zeromemory.core.errors import NotFound
from zeromemory.core.rendering import render
from zeromemory.core.serializers import StrictCharField, StrictSerializer


class MemoryLinksView(APIView):
    @extend_schema_serializer(component_name="MemoryLinkCreate")
    class Input(StrictSerializer):
        to = StrictCharField(max_length=40)
        type = serializers.ChoiceField(choices=links.LINK_TYPES)

    @extend_schema(
        responses=MemoryLinksOut,
        operation_id="v1_memories_links_list",
        summary="A memory's live links both ways, beside what supersedes or contradicts it",
    )
    def get(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_with_links(actor=actor, public_id=memory_id)
        return render(MemoryLinksOut.of(memory))

    @extend_schema(
        request=Input,
        responses={201: MemoryLinkOut, 200: MemoryLinkOut},
        summary="Link to a memory of the same scope (201), or answer the same live link (200)",
    )
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        source = selectors.memory_for_write(actor=actor, public_id=memory_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            target = selectors.memory_for_read(actor=actor, public_id=data["to"])
        except NotFound as exc:
            raise exc.naming("to") from None
        written = links.link_create(
            actor=actor, source=source, target=target, link_type=data["type"]
        )
        code = status.HTTP_201_CREATED if written.created else status.HTTP_200_OK
        return render(MemoryLinkOut.of(written.link), status=code)


class MemoryLinkView(APIView):
    @extend_schema(
        request=None,
        responses={200: MemoryLinkOut},
        summary="Remove a link (add-only: it keeps its row, with when and by whom)",
    )
    def delete(self, request, memory_id: str, link_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        link = links.link_of_memory(actor=actor, memory=memory, public_id=link_id)
        return render(MemoryLinkOut.of(links.link_remove(actor=actor, link=link)))
