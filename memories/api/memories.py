"""REST endpoints for memories (`/api/v1/memories…`). Thin: validate, call a service, shape."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import selectors
from memories.kinds import kind_for_slug
from memories.models import AuthorKind, Memory, SourceKind, TranslationStatus
from memories.services import lifecycle
from memories.services.remember import (
    RememberInput,
    memory_remember,
    memory_remember_many,
)
from zeromemory.core.actor import actor_for_request
from zeromemory.core.envelope import error_body, exception_handler
from zeromemory.core.errors import NotFound
from zeromemory.core.serializers import StrictBooleanField, StrictCharField, StrictSerializer

BATCH_LIMIT = 100


@extend_schema_serializer(component_name="RememberRequest")
class RememberIn(StrictSerializer):
    content = StrictCharField(trim_whitespace=False, allow_blank=True)
    kind = StrictCharField(max_length=32)
    scope = StrictCharField(max_length=40, required=False, allow_null=True)
    verbatim = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=4000)
    conversation_id = StrictCharField(required=False, allow_blank=True, max_length=200, default="")
    source_path = StrictCharField(required=False, allow_blank=True, max_length=1000, default="")
    chunk_hash = StrictCharField(required=False, allow_blank=True, max_length=128, default="")
    idempotency_key = StrictCharField(required=False, allow_null=True, max_length=200)
    absorb_similar = StrictBooleanField(required=False, default=False)
    author_kind = serializers.ChoiceField(choices=AuthorKind.choices, required=False)

    def to_request(self, *, source_kind: str = SourceKind.REMEMBER) -> RememberInput:
        return RememberInput(source_kind=source_kind, **self.validated_data)


class SimilarOut(serializers.Serializer):
    id = serializers.CharField()
    similarity = serializers.FloatField()
    age_days = serializers.FloatField()


class RememberOut(serializers.Serializer):
    id = serializers.CharField()
    scope = serializers.CharField()
    kind = serializers.CharField()
    content = serializers.CharField()
    content_lang = serializers.CharField()
    translation_status = serializers.CharField()
    deduplicated = serializers.BooleanField()
    similar_existing = SimilarOut(many=True)
    created_at = serializers.DateTimeField()


class MemoryOut(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    scope = serializers.CharField(source="scope.public_id")
    kind = serializers.CharField(source="kind_id")
    content = serializers.CharField()
    content_original = serializers.CharField()
    content_lang = serializers.CharField()
    has_original = serializers.BooleanField()
    translation_status = serializers.CharField()
    translation_attempts = serializers.IntegerField()
    translation_error = serializers.CharField()
    author_kind = serializers.CharField()
    agent_name = serializers.CharField()
    state = serializers.SerializerMethodField()
    forgotten_at = serializers.DateTimeField()
    forgotten_reason = serializers.CharField()
    superseded_by = serializers.SerializerMethodField()
    restored_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_state(self, memory: Memory) -> str:
        return memory.state

    def get_superseded_by(self, memory: Memory) -> str | None:
        return memory.superseded_by.public_id if memory.superseded_by_id else None


class ProvenanceOut(serializers.Serializer):
    source_kind = serializers.CharField()
    absorbed = serializers.BooleanField()
    client_name = serializers.CharField()
    conversation_id = serializers.CharField()
    source_path = serializers.CharField()
    chunk_hash = serializers.CharField()
    verbatim = serializers.CharField()
    written_text = serializers.CharField()
    created_by = serializers.CharField(source="created_by.username", default=None)
    created_at = serializers.DateTimeField()


class VersionOut(serializers.Serializer):
    number = serializers.IntegerField()
    kind = serializers.CharField(source="kind_id")
    content = serializers.CharField()
    content_original = serializers.CharField()
    content_lang = serializers.CharField()
    edited_by = serializers.CharField(source="edited_by.username", default=None)
    created_at = serializers.DateTimeField()


class MemoryDetailOut(MemoryOut):
    provenance = ProvenanceOut(many=True)
    versions = VersionOut(many=True)
    absorbed_memories = serializers.SerializerMethodField()

    def get_absorbed_memories(self, memory: Memory) -> list[dict]:
        """Memories merged into this one (e.g. the same fact first written in another language)."""
        return [
            {
                "id": other.public_id,
                "content": other.content,
                "content_original": other.content_original,
                "content_lang": other.content_lang,
            }
            for other in memory.supersedes.all()
        ]


def _detail(memory: Memory) -> dict:
    memory = (
        Memory.objects.select_related("scope", "superseded_by")
        .prefetch_related("provenance__created_by", "versions__edited_by", "supersedes")
        .get(pk=memory.pk)
    )
    return MemoryDetailOut(memory).data


class MemoryListView(APIView):
    class Filters(StrictSerializer):
        scope = StrictCharField(required=False, max_length=40)
        kind = StrictCharField(required=False, max_length=32)
        translation_status = serializers.ChoiceField(
            choices=TranslationStatus.choices, required=False
        )
        author_kind = serializers.ChoiceField(choices=AuthorKind.choices, required=False)
        state = serializers.ChoiceField(choices=selectors.STATES, required=False, default="valid")
        created_after = serializers.DateTimeField(required=False)
        created_before = serializers.DateTimeField(required=False)
        cursor = StrictCharField(required=False, max_length=40)
        limit = serializers.IntegerField(required=False, min_value=1, max_value=200, default=50)

    @extend_schema(
        parameters=[Filters],
        responses=MemoryOut(many=True),
        summary="List memories (newest first, cursor pagination)",
    )
    def get(self, request):
        actor = actor_for_request(request)
        query = self.Filters(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        data = dict(query.validated_data)
        cursor, limit = data.pop("cursor", None), data.pop("limit")
        if data.get("kind"):
            kind_for_slug(data["kind"])
        page, next_cursor = selectors.memory_list(
            actor=actor, filters=selectors.MemoryFilters(**data), cursor=cursor, limit=limit
        )
        return Response({"results": MemoryOut(page, many=True).data, "next_cursor": next_cursor})

    @extend_schema(
        request=RememberIn,
        responses={201: RememberOut, 200: RememberOut},
        summary="Remember: write a memory (201), or absorb into an identical one (200)",
    )
    def post(self, request):
        actor = actor_for_request(request)
        serializer = RememberIn(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = memory_remember(actor=actor, request=serializer.to_request())
        code = status.HTTP_200_OK if result.deduplicated else status.HTTP_201_CREATED
        return Response(result.as_dict(), status=code)


class BatchItemOut(serializers.Serializer):
    index = serializers.IntegerField()
    status = serializers.IntegerField(help_text="201 created, 200 deduplicated, or the error's")
    memory = RememberOut(required=False)
    error = serializers.DictField(required=False, help_text='{"code", "message", "details"}')


class BatchOut(serializers.Serializer):
    results = BatchItemOut(many=True)


class MemoryBatchView(APIView):
    @extend_schema_serializer(component_name="RememberBatchRequest")
    class Input(StrictSerializer):
        items = serializers.ListField(child=serializers.JSONField(), allow_empty=False)

        def validate_items(self, items):
            if len(items) > BATCH_LIMIT:
                raise serializers.ValidationError(f"At most {BATCH_LIMIT} items per batch.")
            return items

    @extend_schema(
        request=Input,
        responses=BatchOut,
        summary="Remember up to 100 memories; each item is answered on its own",
    )
    def post(self, request):
        actor = actor_for_request(request)
        batch = self.Input(data=request.data)
        batch.is_valid(raise_exception=True)
        answers: list[dict | None] = [None] * len(batch.validated_data["items"])
        requests, positions = [], []
        checker = RememberIn()  # one instance: building serializer fields per item is costly
        for index, raw in enumerate(batch.validated_data["items"]):
            try:
                validated = checker.run_validation(raw)
            except serializers.ValidationError as exc:
                error = exception_handler(exc, {})
                answers[index] = {"index": index, "status": 400, **error.data}
                continue
            requests.append(RememberInput(source_kind=SourceKind.REMEMBER, **validated))
            positions.append(index)
        results = memory_remember_many(actor=actor, requests=requests) if requests else []
        for index, outcome in zip(positions, results, strict=True):
            if outcome.error is not None:
                answers[index] = {
                    "index": index,
                    "status": outcome.error.status,
                    **error_body(outcome.error.code, outcome.error.message, outcome.error.details),
                }
            else:
                code = 200 if outcome.result.deduplicated else 201
                answers[index] = {
                    "index": index,
                    "status": code,
                    "memory": outcome.result.as_dict(),
                }
        return Response({"results": answers})


class MemoryDetailView(APIView):
    @extend_schema_serializer(component_name="MemoryEdit")
    class Input(StrictSerializer):
        content = StrictCharField(required=False, trim_whitespace=False, allow_blank=True)
        kind = StrictCharField(required=False, max_length=32)

    @extend_schema(responses=MemoryDetailOut, summary="One memory with provenance and versions")
    def get(self, request, memory_id: str):
        memory = selectors.memory_for_read(actor=actor_for_request(request), public_id=memory_id)
        return Response(_detail(memory))

    @extend_schema(request=Input, responses=MemoryDetailOut, summary="Edit content or kind")
    def patch(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        memory = lifecycle.memory_edit(actor=actor, memory=memory, **serializer.validated_data)
        return Response(_detail(memory))


class ForgetView(APIView):
    @extend_schema_serializer(component_name="MemoryForget")
    class Input(StrictSerializer):
        reason = StrictCharField(max_length=1000)

    @extend_schema(request=Input, responses=MemoryDetailOut, summary="Forget (invalidate)")
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        memory = lifecycle.memory_forget(actor=actor, memory=memory, **serializer.validated_data)
        return Response(_detail(memory))


class RestoreView(APIView):
    @extend_schema(request=None, responses=MemoryDetailOut, summary="Restore a forgotten memory")
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        return Response(_detail(lifecycle.memory_restore(actor=actor, memory=memory)))


class SupersedeView(APIView):
    @extend_schema_serializer(component_name="MemorySupersede")
    class Input(StrictSerializer):
        by = StrictCharField(max_length=40)

    @extend_schema(request=Input, responses=MemoryDetailOut, summary="Supersede by another memory")
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            replacement = selectors.memory_for_read(
                actor=actor, public_id=serializer.validated_data["by"]
            )
        except NotFound as exc:
            raise exc.naming("by") from None
        memory = lifecycle.memory_supersede(actor=actor, memory=memory, by=replacement)
        return Response(_detail(memory))
