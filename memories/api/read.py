"""REST endpoints of the read path: recall, context, briefing, and the caller's activity log.

Thin: recall, context and briefing hand the body (briefing: its query string, as the arguments
a body would carry) to the service as sent, which parses it once with the request model that
the MCP tools share (`memories.recall.inputs`: RecallRequest, ContextRequest, BriefingRequest;
the OpenAPI schema of the bodies is the models' JSON schema), inside the call's activity row.
The query and the topic stay exactly as they arrived (no whitespace trimming), so the activity
log shows what was sent. The activity log and the benchmark validate their own input here.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from memories.activity import log as activity
from memories.activity.schemas import ActivityOut, ActivityPageOut
from memories.api import early_pass
from memories.models import ActivityOperation, ActivityOutcome
from memories.recall import benchmark, context, inputs, recall
from memories.schemas import BenchmarkOut, ContextOut, RecallOut
from scopes import access
from zeromemory.core.actor import Surface, actor_for_request
from zeromemory.core.rendering import render
from zeromemory.core.serializers import PagedQuery, StrictCharField, StrictSerializer


class StrictIntegerField(serializers.IntegerField):
    """An integer and only an integer in a JSON body: "10", 10.0 and true are refused."""

    default_error_messages = {"not_an_integer": _("Must be an integer.")}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("not_an_integer")
        return super().to_internal_value(data)


class RecallView(early_pass.EarlyPass, APIView):
    start = staticmethod(early_pass.query_pass(inputs.RecallRequest, "query"))

    @extend_schema(
        request=inputs.RecallRequest,
        responses=RecallOut,
        summary="Recall: hybrid search (vector + full text) over the memories you may read",
    )
    def post(self, request):
        actor = actor_for_request(request)
        found = recall.answer_recall(actor=actor, arguments=request.data, started=self.started)
        # Answered, so the body held a query, which the answer repeats exactly as sent.
        return render(found.answer(request.data["query"]))


class ContextView(early_pass.EarlyPass, APIView):
    start = staticmethod(early_pass.query_pass(inputs.ContextRequest, "topic"))

    @extend_schema(
        request=inputs.ContextRequest,
        responses=ContextOut,
        summary="Context for a topic within a token budget (JSON sections and markdown)",
    )
    def post(self, request):
        actor = actor_for_request(request)
        result = context.answer_context(actor=actor, arguments=request.data, started=self.started)
        return render(result.answer())


class BriefingView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("max_tokens", OpenApiTypes.INT, description="100 to 32000"),
            OpenApiParameter("scopes", OpenApiTypes.STR, description="comma-separated scope ids"),
            OpenApiParameter(
                "as_of", OpenApiTypes.STR, description="ISO 8601 instant with its offset"
            ),
            OpenApiParameter(
                "conversation_id", OpenApiTypes.STR, description="your conversation (session) id"
            ),
        ],
        responses=ContextOut,
        summary="Session briefing: what matters most, recent decisions, open loops",
    )
    def get(self, request):
        actor = actor_for_request(request)
        arguments = inputs.BriefingRequest.query_arguments(request.query_params.dict())
        result = context.answer_briefing(actor=actor, arguments=arguments)
        return render(result.answer())


class ActivityListView(APIView):
    class Filters(PagedQuery):
        operation = serializers.ChoiceField(choices=ActivityOperation.choices, required=False)
        surface = serializers.ChoiceField(choices=Surface.choices, required=False)
        outcome = serializers.ChoiceField(choices=ActivityOutcome.choices, required=False)
        since = serializers.DateTimeField(required=False)
        until = serializers.DateTimeField(required=False)

    @extend_schema(
        parameters=[Filters],
        responses=ActivityPageOut,
        summary="Your own activity: recalls, contexts, briefings, remembers (newest first)",
    )
    def get(self, request):
        actor = actor_for_request(request)
        data, page = self.Filters.read(request.query_params)
        found, next_cursor = activity.activity_list(
            actor=actor, filters=activity.ActivityFilters(**data), page=page
        )
        results = [ActivityOut.of(row) for row in found]
        return render(ActivityPageOut(results=results, next_cursor=next_cursor))


class BenchmarkCaseIn(StrictSerializer):
    question = StrictCharField(trim_whitespace=False, max_length=inputs.MAX_QUERY_CHARS)
    expected_ids = serializers.ListField(
        child=StrictCharField(max_length=40), max_length=benchmark.MAX_EXPECTED
    )


class BenchmarkView(APIView):
    """recall@k and MRR of a scope for the caller's questions (each one recall, logged)."""

    @extend_schema_serializer(component_name="Benchmark")
    class Input(StrictSerializer):
        cases = serializers.ListField(child=BenchmarkCaseIn(), max_length=benchmark.MAX_CASES)
        k = StrictIntegerField(required=False, default=10, min_value=1, max_value=inputs.MAX_K)

    @extend_schema(
        request=Input,
        responses=BenchmarkOut,
        summary="Benchmark a scope: recall@k and MRR for questions with the ids that answer them",
    )
    def post(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.readable_scope(actor, scope_id)
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        cases = [benchmark.Case(**case) for case in body.validated_data["cases"]]
        found = benchmark.scope_benchmark(
            actor=actor, scope=scope, cases=cases, k=body.validated_data["k"]
        )
        return render(BenchmarkOut.of(found))
