"""REST endpoints for memories (`/api/v1/memories…`). Thin: validate, call a service, shape."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from memories import selectors
from memories.api import early_pass
from memories.embeddings import SMALL_BATCH
from memories.entities.given import ENTITIES_SCHEMA
from memories.kinds import kind_for_slug
from memories.models import AuthorKind, SourceKind, TranslationStatus
from memories.schemas import (
    BatchItemOut,
    BatchOut,
    MemoryDetailOut,
    MemoryOut,
    MemoryPageOut,
    MoveOut,
    RelocatedOut,
    RememberOut,
)
from memories.services import lifecycle, relocate
from memories.services.relocate import MAX_MOVE
from memories.services.remember import (
    RememberInput,
    memory_remember,
    memory_remember_many,
)
from memories.timeline import HistoryOut
from scopes import access
from zeromemory.core import foreground
from zeromemory.core.actor import Actor, actor_for_request
from zeromemory.core.envelope import exception_handler
from zeromemory.core.errors import NotFound, ValidationFailed, error_body
from zeromemory.core.rendering import render
from zeromemory.core.serializers import (
    PagedQuery,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    checker,
    validated,
)

BATCH_LIMIT = 100


@extend_schema_field(ENTITIES_SCHEMA)
class EntitiesField(serializers.JSONField):
    """What a memory is about, as its writer names it: passed to the service as sent."""


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
    # Checked by the write service (`memories.entities.given`), the same for every door.
    entities = EntitiesField(required=False, allow_null=True)


def _detail(actor: Actor, memory_id: str) -> Response:
    return render(MemoryDetailOut.of(selectors.memory_detail(actor=actor, public_id=memory_id)))


class MemoryListView(early_pass.EarlyPass, APIView):
    class Filters(PagedQuery):
        scope = StrictCharField(required=False, max_length=40)
        kind = StrictCharField(required=False, max_length=32)
        translation_status = serializers.ChoiceField(
            choices=TranslationStatus.choices, required=False
        )
        author_kind = serializers.ChoiceField(choices=AuthorKind.choices, required=False)
        state = serializers.ChoiceField(choices=selectors.STATES, required=False, default="valid")
        created_after = serializers.DateTimeField(required=False)
        created_before = serializers.DateTimeField(required=False)

    start = staticmethod(early_pass.remember_pass)

    @extend_schema(
        parameters=[Filters],
        responses=MemoryPageOut,
        operation_id="v1_memories_list",
        summary="List memories (newest first, cursor pagination)",
    )
    def get(self, request):
        actor = actor_for_request(request)
        data, page = self.Filters.read(request.query_params)
        if data.get("kind"):
            kind_for_slug(data["kind"])
        found, next_cursor = selectors.memory_list(
            actor=actor, filters=selectors.MemoryFilters(**data), page=page
        )
        results = [MemoryOut.of(memory) for memory in found]
        return render(MemoryPageOut(results=results, next_cursor=next_cursor))

    @extend_schema(
        request=RememberIn,
        responses={201: RememberOut, 200: RememberOut},
        summary="Remember: write a memory (201), or absorb into an identical one (200)",
    )
    def post(self, request):
        actor = actor_for_request(request)
        body = validated(RememberIn, request.data)
        remember = RememberInput(source_kind=SourceKind.REMEMBER, **body)
        result = memory_remember(
            actor=actor, request=remember, render=RememberOut.rendered, started=self.started
        )
        code = status.HTTP_200_OK if result.deduplicated else status.HTTP_201_CREATED
        return render(RememberOut.answer(result), status=code)


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
        if len(batch.validated_data["items"]) >= SMALL_BATCH:
            foreground.step_back()  # bulk work: the host's requests go first from here on
        answers: list[BatchItemOut | None] = [None] * len(batch.validated_data["items"])
        requests, positions = [], []
        each = checker(RememberIn)  # this thread's: building serializer fields per item is costly
        for index, raw in enumerate(batch.validated_data["items"]):
            try:
                valid = each.run_validation(raw)
            except serializers.ValidationError as exc:
                error = exception_handler(exc, {}).data["error"]
                answers[index] = BatchItemOut(index=index, status=400, error=error)
                continue
            requests.append(RememberInput(source_kind=SourceKind.REMEMBER, **valid))
            positions.append(index)
        results = (
            memory_remember_many(actor=actor, requests=requests, render=RememberOut.rendered)
            if requests
            else []
        )
        for index, outcome in zip(positions, results, strict=True):
            if outcome.error is not None:
                error = error_body(outcome.error.code, outcome.error.message, outcome.error.details)
                answers[index] = BatchItemOut(
                    index=index, status=outcome.error.status, error=error["error"]
                )
            else:
                code = 200 if outcome.result.deduplicated else 201
                answers[index] = BatchItemOut(
                    index=index, status=code, memory=RememberOut.answer(outcome.result)
                )
        return render(BatchOut(results=answers), exclude_none=True)


class MemoryDetailView(APIView):
    @extend_schema_serializer(component_name="MemoryEdit")
    class Input(StrictSerializer):
        content = StrictCharField(required=False, trim_whitespace=False, allow_blank=True)
        kind = StrictCharField(required=False, max_length=32)

    @extend_schema(responses=MemoryDetailOut, summary="One memory with provenance and versions")
    def get(self, request, memory_id: str):
        return _detail(actor_for_request(request), memory_id)

    @extend_schema(request=Input, responses=MemoryDetailOut, summary="Edit content or kind")
    def patch(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        memory = lifecycle.memory_edit(actor=actor, memory=memory, **serializer.validated_data)
        return _detail(actor, memory.public_id)


class HistoryView(APIView):
    @extend_schema(
        responses=HistoryOut,
        summary="A memory's history: validity periods, versions, supersede chain, merges",
    )
    def get(self, request, memory_id: str):
        actor = actor_for_request(request)
        return render(HistoryOut.of(selectors.memory_history(actor=actor, public_id=memory_id)))


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
        return _detail(actor, memory.public_id)


class RestoreView(APIView):
    @extend_schema(request=None, responses=MemoryDetailOut, summary="Restore a forgotten memory")
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        lifecycle.memory_restore(actor=actor, memory=memory)
        return _detail(actor, memory.public_id)


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
        return _detail(actor, memory.public_id)


# -- move and share (issue 38) ------------------------------------------------------------------


class MoveView(APIView):
    @extend_schema_serializer(component_name="MemoryMove")
    class Input(StrictSerializer):
        memory_ids = serializers.ListField(
            child=StrictCharField(max_length=40), max_length=MAX_MOVE, allow_empty=False
        )
        to_scope = StrictCharField(max_length=40)
        confirm = StrictBooleanField(required=False, default=False)

    @extend_schema(
        request=Input,
        responses=MoveOut,
        summary="Move memories to another writable scope (add-only; confirm: true required)",
    )
    def post(self, request):
        actor = actor_for_request(request)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if not data["confirm"]:
            raise ValidationFailed("confirm", "A move changes where memories live: confirm: true.")
        memories = [
            _named("memory_ids", lambda i=i: selectors.memory_for_write(actor=actor, public_id=i))
            for i in data["memory_ids"]
        ]
        to = _named("to_scope", lambda: access.writable_scope(actor, data["to_scope"]))
        moved = relocate.memory_move(actor=actor, memories=memories, to=to)
        return render(MoveOut(to_scope=to.public_id, results=[RelocatedOut.of(m) for m in moved]))


class ShareView(APIView):
    @extend_schema_serializer(component_name="MemoryShare")
    class Input(StrictSerializer):
        to_scope = StrictCharField(max_length=40)

    @extend_schema(
        request=Input,
        responses={201: RelocatedOut, 200: RelocatedOut},
        summary="Copy a readable memory into another writable scope, its provenance pointing back",
    )
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_read(actor=actor, public_id=memory_id)
        access.require_write_access(actor)  # a read-only credential hears so, whatever the scope
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        to_scope = body.validated_data["to_scope"]
        to = _named("to_scope", lambda: access.writable_scope(actor, to_scope))
        shared = relocate.memory_share(actor=actor, memory=memory, to=to)
        code = status.HTTP_200_OK if shared.deduplicated else status.HTTP_201_CREATED
        return render(RelocatedOut.of(shared), status=code)


def _named(field: str, find):
    """`find()`, with a not-found refusal naming the body's `field`."""
    try:
        return find()
    except NotFound as exc:
        raise exc.naming(field) from None
