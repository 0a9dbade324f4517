"""REST endpoints of capture: ingest a chunk (answered at once), and read a chunk's state."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.views import APIView

from memories.capture.importer import SOURCE_TOOLS, memory_import
from memories.capture.ingest import IngestInput, chunk_for_read, chunk_ingest
from memories.capture.schemas import ChunkOut, ImportedOut, ImportOut, IngestOut
from memories.models import ChunkSource
from zeromemory.core.actor import actor_for_request
from zeromemory.core.rendering import render
from zeromemory.core.serializers import StrictBooleanField, StrictCharField, StrictSerializer


@extend_schema_serializer(component_name="IngestRequest")
class IngestIn(StrictSerializer):
    content = StrictCharField(required=False, trim_whitespace=False, allow_blank=True)
    source_kind = serializers.ChoiceField(choices=ChunkSource.choices)
    client = StrictCharField(required=False, allow_blank=True, max_length=120, default="")
    conversation_id = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
    source_path = StrictCharField(required=False, allow_blank=True, max_length=1000, default="")
    chunk_hash = StrictCharField(required=False, allow_blank=True, max_length=128, default="")
    scope = StrictCharField(required=False, allow_null=True, max_length=40)
    probe = StrictBooleanField(required=False, default=False)

    def validate_content(self, value: str) -> str:
        if len(value) > settings.MAX_CHUNK_CHARS:
            raise serializers.ValidationError(
                f"Content is longer than {settings.MAX_CHUNK_CHARS} characters."
            )
        return value


class IngestView(APIView):
    @extend_schema(
        request=IngestIn,
        responses={202: IngestOut, 200: IngestOut},
        summary="Ingest a transcript chunk, document or history: stored at once, extracted later",
    )
    def post(self, request):
        actor = actor_for_request(request)
        body = IngestIn(data=request.data)
        body.is_valid(raise_exception=True)
        ingested = chunk_ingest(actor=actor, request=IngestInput(**body.validated_data))
        answer = IngestOut.of(chunk=ingested.chunk, duplicate=ingested.duplicate)
        return render(answer, status=202 if answer.stored_now else status.HTTP_200_OK)


class ChunkDetailView(APIView):
    @extend_schema(
        responses=ChunkOut, summary="A chunk: status, memories produced, what was dropped"
    )
    def get(self, request, chunk_id: str):
        chunk = chunk_for_read(actor=actor_for_request(request), public_id=chunk_id)
        return render(ChunkOut.of(chunk))


@extend_schema_serializer(component_name="ImportRequest")
class ImportIn(StrictSerializer):
    source_tool = serializers.ChoiceField(choices=SOURCE_TOOLS)
    source_path = StrictCharField(max_length=1000)
    content = StrictCharField(trim_whitespace=False, max_length=settings.MAX_CHUNK_CHARS)
    scope = StrictCharField(required=False, allow_null=True, max_length=40)


class ImportView(APIView):
    @extend_schema(
        request=ImportIn,
        responses=ImportOut,
        summary="Import CLAUDE.md, AGENTS.md, a Cursor rule or a Claude Code memory file",
    )
    def post(self, request):
        actor = actor_for_request(request)
        body = ImportIn(data=request.data)
        body.is_valid(raise_exception=True)
        pieces = memory_import(actor=actor, **body.validated_data)
        return render(ImportOut(results=[ImportedOut(**vars(piece)) for piece in pieces]))
