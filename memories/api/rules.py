"""REST endpoints of usage feedback (`POST /api/v1/memories/used`) and rules (`/api/v1/rules…`).
Thin: validate, call a selector or service, shape. Approving (or rewording) and moving a rule
take a signed-in session with a recent password check: a token or OAuth grant gets 403."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from memories import selectors
from memories.feedback import Wrong, mark_used
from memories.models import RuleStatus
from memories.rules import decisions
from memories.rules import selectors as rule_selectors
from memories.rules.candidates import rule_nominate
from memories.rules.decisions import MAX_RULE_CHARS
from memories.rules.schemas import RuleOut, RulesOut, UsedOut
from memories.rules.usage import MAX_IDS
from zeromemory.core.actor import actor_for_request
from zeromemory.core.rendering import render
from zeromemory.core.serializers import StrictBooleanField, StrictCharField, StrictSerializer


class WrongIn(StrictSerializer):
    memory_id = StrictCharField(max_length=40)
    reason = StrictCharField(max_length=2000)


class MarkUsedView(APIView):
    @extend_schema_serializer(component_name="MarkUsed")
    class Input(StrictSerializer):
        memory_ids = serializers.ListField(
            child=StrictCharField(max_length=40), max_length=MAX_IDS, allow_empty=True
        )
        wrong = serializers.ListField(
            child=WrongIn(), max_length=MAX_IDS, required=False, default=list
        )
        conversation_id = StrictCharField(
            required=False, allow_blank=True, allow_null=True, max_length=200
        )

    @extend_schema(
        request=Input,
        responses=UsedOut,
        summary="Report the memories an agent used (and found wrong) in a conversation",
    )
    def post(self, request):
        body = self.Input(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        answer = mark_used(
            actor=actor_for_request(request),
            memory_ids=data["memory_ids"],
            wrong=[Wrong(**item) for item in data["wrong"]],
            conversation_id=data.get("conversation_id"),
        )
        return render(answer)


class RuleListView(APIView):
    class Filters(StrictSerializer):
        scope = StrictCharField(required=False, max_length=40)
        status = serializers.ChoiceField(
            choices=RuleStatus.choices, required=False, default=RuleStatus.APPROVED
        )

    @extend_schema(
        parameters=[Filters],
        responses=RulesOut,
        operation_id="v1_rules_list",
        summary="Rules: approved ones of readable scopes, candidates and rejected of administered",
    )
    def get(self, request):
        query = self.Filters(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        found = rule_selectors.rule_list(actor=actor_for_request(request), **query.validated_data)
        return render(RulesOut(results=[RuleOut.of(rule) for rule in found]))


def _decide(request, rule_id: str, decide, body_class=None, *, person: bool = True):
    actor = actor_for_request(request)
    find = rule_selectors.rule_for_decision if person else rule_selectors.rule_for_admin
    rule = find(actor=actor, public_id=rule_id)
    options = {}
    if body_class is not None:
        body = body_class(data=request.data)
        body.is_valid(raise_exception=True)
        options = {k: v for k, v in body.validated_data.items() if v is not None}
    decide(actor=actor, rule=rule, **options)
    return render(RuleOut.of(rule_selectors.rule_for_admin(actor=actor, public_id=rule_id)))


class RuleApproveView(APIView):
    @extend_schema_serializer(component_name="RuleApprove")
    class Input(StrictSerializer):
        text = StrictCharField(required=False, allow_null=True, max_length=MAX_RULE_CHARS)
        # The second look: approve a wording that tells agents to fetch, run or send something.
        confirm = StrictBooleanField(required=False, default=False)

    @extend_schema(
        request=Input,
        responses=RuleOut,
        summary="Approve a rule, in new words or not (a signed-in session, password checked "
        "recently); a wording that fetches, runs or sends is held until approved with confirm",
    )
    def post(self, request, rule_id: str):
        return _decide(request, rule_id, decisions.rule_approve, self.Input)


class RuleRejectView(APIView):
    @extend_schema(request=None, responses=RuleOut, summary="Reject a rule")
    def post(self, request, rule_id: str):
        return _decide(request, rule_id, decisions.rule_reject, person=False)


class RuleMoveView(APIView):
    @extend_schema_serializer(component_name="RuleMove")
    class Input(StrictSerializer):
        position = serializers.IntegerField(min_value=1, max_value=10_000)

    @extend_schema(
        request=Input,
        responses=RuleOut,
        summary="Move an approved rule in the order (a signed-in session, password checked "
        "recently)",
    )
    def post(self, request, rule_id: str):
        return _decide(request, rule_id, decisions.rule_move, self.Input)


class RulePromoteView(APIView):
    @extend_schema(
        request=None,
        responses=RuleOut,
        summary="Nominate a memory as a rule candidate of its scope (writers; admins decide)",
    )
    def post(self, request, memory_id: str):
        actor = actor_for_request(request)
        memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
        return render(RuleOut.of(rule_nominate(memory=memory)))
