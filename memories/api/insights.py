"""REST endpoints of insights: a scope's figures over a period, one session's receipt, and what
a scope holds."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from memories.insights import answers, overview, sessions
from memories.insights.schemas import InsightsOut, ReceiptOut, ScopeOverviewOut
from zeromemory.core.actor import actor_for_request
from zeromemory.core.rendering import render
from zeromemory.core.serializers import StrictCharField, StrictSerializer


class InsightsView(APIView):
    class Filters(StrictSerializer):
        scope = StrictCharField(max_length=40)
        days = serializers.ChoiceField(choices=answers.PERIODS, required=False, default=30)

    @extend_schema(
        parameters=[Filters],
        responses=InsightsOut,
        summary="A scope's insights: value, quality, health and cost over 7, 30 or 90 days",
    )
    def get(self, request):
        query = self.Filters(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        return render(
            answers.scope_insights(
                actor=actor_for_request(request),
                scope_id=query.validated_data["scope"],
                days=int(query.validated_data["days"]),
            )
        )


class SessionReceiptView(APIView):
    class Filters(StrictSerializer):
        conversation_id = StrictCharField(max_length=200)

    @extend_schema(
        parameters=[Filters],
        responses=ReceiptOut,
        summary="One agent session's receipt: memories recalled and written, tokens, conflicts",
    )
    def get(self, request):
        query = self.Filters(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        return render(
            sessions.session_receipt(
                actor=actor_for_request(request),
                conversation_id=query.validated_data["conversation_id"],
            )
        )


class ScopeOverviewView(APIView):
    @extend_schema(
        responses=ScopeOverviewOut,
        summary="What a scope holds: kinds, newest and most recalled, rules, open review items",
    )
    def get(self, request, scope_id: str):
        return render(overview.scope_overview(actor=actor_for_request(request), scope_id=scope_id))
