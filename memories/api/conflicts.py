"""REST endpoints of the review queue (`/api/v1/conflicts…`) and of challenging a memory.
Thin: validate, call a selector or service, shape."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.views import APIView

from memories import selectors
from memories.hygiene import review, service
from memories.hygiene import selectors as queue
from memories.hygiene.schemas import (
    ChallengeOut,
    ConflictOut,
    ConflictPageOut,
    ConflictsResolvedOut,
    ScopeScanOut,
)
from memories.models import ConflictStatus, Relation
from scopes import access
from zeromemory.core.actor import actor_for_request
from zeromemory.core.rendering import render
from zeromemory.core.serializers import (
    PagedQuery,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
)


def _answer(actor, public_id: str, code: int = status.HTTP_200_OK):
    return render(
        ConflictOut.of(queue.conflict_for_review(actor=actor, public_id=public_id)), status=code
    )


class ConflictListView(APIView):
    class Filters(PagedQuery):
        scope = StrictCharField(required=False, max_length=40)
        status = serializers.ChoiceField(
            choices=ConflictStatus.choices, required=False, default=ConflictStatus.OPEN
        )
        verdict = serializers.ChoiceField(choices=Relation.choices, required=False)

    @extend_schema(
        parameters=[Filters],
        responses=ConflictPageOut,
        operation_id="v1_conflicts_list",
        summary="The review queue of the scopes you administer (newest first)",
    )
    def get(self, request):
        data, page = self.Filters.read(request.query_params)
        found, next_cursor = queue.conflict_list(
            actor=actor_for_request(request), filters=queue.ConflictFilters(**data), page=page
        )
        return render(
            ConflictPageOut(results=[ConflictOut.of(c) for c in found], next_cursor=next_cursor)
        )


class ConflictDetailView(APIView):
    @extend_schema(responses=ConflictOut, summary="One conflict, both memories side by side")
    def get(self, request, conflict_id: str):
        return _answer(actor_for_request(request), conflict_id)


class ConflictResolveView(APIView):
    @extend_schema_serializer(component_name="ConflictResolve")
    class Input(StrictSerializer):
        action = serializers.ChoiceField(choices=review.ACTIONS)

    @extend_schema(request=Input, responses=ConflictOut, summary="Resolve a conflict, or undo")
    def post(self, request, conflict_id: str):
        actor = actor_for_request(request)
        conflict = queue.conflict_for_review(actor=actor, public_id=conflict_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        review.conflict_resolve(actor=actor, conflict=conflict, **body.validated_data)
        return _answer(actor, conflict_id)


class ChallengeView(APIView):
    @extend_schema_serializer(component_name="MemoryChallenge")
    class Input(StrictSerializer):
        reason = StrictCharField(max_length=2000)

    @extend_schema(
        request=Input,
        responses={201: ChallengeOut, 200: ChallengeOut},
        summary="Dispute a memory: a review-queue item for the scope's admins",
    )
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        reason = body.validated_data["reason"]
        conflict, new = review.memory_challenge(actor=actor, memory=memory, reason=reason)
        code = status.HTTP_201_CREATED if new else status.HTTP_200_OK
        return render(ChallengeOut.of(conflict, new=new, reason=reason), status=code)


@extend_schema_serializer(component_name="ConflictResolveItem")
class ResolutionItem(StrictSerializer):
    conflict_id = StrictCharField(max_length=40)
    action = serializers.ChoiceField(choices=review.ACTIONS)


class ConflictBulkResolveView(APIView):
    @extend_schema_serializer(component_name="ConflictBulkResolve")
    class Input(StrictSerializer):
        items = serializers.ListField(
            child=ResolutionItem(), allow_empty=False, max_length=review.MAX_BULK
        )
        dry_run = StrictBooleanField(required=False, default=False)
        confirm = StrictBooleanField(required=False, default=False)

    @extend_schema(
        request=Input,
        responses=ConflictsResolvedOut,
        operation_id="v1_conflicts_resolve_many",
        summary="Resolve several conflicts at once, all or nothing (dry_run: write nothing)",
    )
    def post(self, request):
        actor = actor_for_request(request)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        conflicts = queue.conflicts_for_review(
            actor=actor, public_ids=[item["conflict_id"] for item in data["items"]]
        )
        results = review.conflicts_resolve(
            actor=actor,
            resolutions=[
                (c, item["action"]) for c, item in zip(conflicts, data["items"], strict=True)
            ],
            dry_run=data["dry_run"],
            confirm=data["confirm"],
            render=lambda c: ConflictOut.of(
                queue.conflict_for_review(actor=actor, public_id=c.public_id)
            ),
        )
        return render(ConflictsResolvedOut(dry_run=data["dry_run"], results=results))


class ScopeHygieneScanView(APIView):
    @extend_schema_serializer(component_name="ScopeHygieneScan")
    class Input(StrictSerializer):
        cursor = StrictCharField(required=False, max_length=40)  # next_cursor of the last answer

    @extend_schema(
        request=Input,
        responses=ScopeScanOut,
        summary="Scan one scope for duplicates and contradictions now (admins)",
    )
    def post(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        scanned = service.scope_scan_now(
            actor=actor, scope=scope, cursor=body.validated_data.get("cursor")
        )
        return render(ScopeScanOut.of(scope.public_id, scanned))
