"""REST endpoints for scopes, members, tokens and the caller (`/api/v1/`)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from scopes import access, erasure, selectors, services
from scopes.models import Role, Scope, ScopeKind
from scopes.schemas import (
    MemberListOut,
    MemberOut,
    MeOut,
    ScopeListOut,
    ScopeOut,
    TokenCreatedOut,
    TokenListOut,
    TokenOut,
    TokenSummaryOut,
)
from zeromemory.core.actor import Actor, actor_for_request
from zeromemory.core.errors import NotFound
from zeromemory.core.rendering import render
from zeromemory.core.serializers import StrictBooleanField, StrictCharField, StrictSerializer

ROLE_NAMES = [role.slug for role in Role]


def _scope(actor: Actor, scope: Scope) -> ScopeOut:
    return selectors.scope_answers(actor=actor, scopes=[scope])[0]


class MeView(APIView):
    @extend_schema_serializer(component_name="AccountDelete")
    class DeleteInput(StrictSerializer):
        password = StrictCharField(max_length=4096, trim_whitespace=False)
        delete_shared_writes = StrictBooleanField(required=False, default=False)

    @extend_schema(responses=MeOut, summary="The caller: user, token and readable scopes")
    def get(self, request):
        actor = actor_for_request(request)
        token = actor.token
        summary = None
        if token is not None:
            summary = TokenSummaryOut(
                id=token.public_id, name=token.name, read_only=token.read_only
            )
        return render(
            MeOut(
                username=actor.user.get_username(),
                email=actor.user.email,
                is_staff=actor.user.is_staff,
                token=summary,
                scopes=selectors.readable_scope_answers(actor=actor),
            )
        )

    @extend_schema(
        request=DeleteInput,
        responses={204: None},
        summary="Delete the caller's account (a signed-in session and the password, no token)",
    )
    def delete(self, request):
        actor = actor_for_request(request)
        body = self.DeleteInput(data=request.data)
        body.is_valid(raise_exception=True)
        erasure.account_delete(actor=actor, **body.validated_data)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ScopeListView(APIView):
    @extend_schema_serializer(component_name="ScopeCreate")
    class Input(StrictSerializer):
        name = StrictCharField(max_length=120)
        slug = StrictCharField(max_length=50)
        kind = serializers.ChoiceField(choices=[ScopeKind.TEAM, ScopeKind.PROJECT])

    @extend_schema(
        responses=ScopeListOut, summary="Scopes the caller can read", operation_id="v1_scopes_list"
    )
    def get(self, request):
        actor = actor_for_request(request)
        return render(ScopeListOut(results=selectors.readable_scope_answers(actor=actor)))

    @extend_schema(request=Input, responses={201: ScopeOut}, summary="Create a team or project")
    def post(self, request):
        actor = actor_for_request(request)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        scope = services.scope_create(actor=actor, **serializer.validated_data)
        return render(_scope(actor, scope), status=status.HTTP_201_CREATED)


class ScopeDetailView(APIView):
    @extend_schema_serializer(component_name="ScopeUpdate")
    class Input(StrictSerializer):
        name = StrictCharField(max_length=120, required=False)
        slug = StrictCharField(max_length=50, required=False)

    @extend_schema(responses=ScopeOut, summary="One scope")
    def get(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.readable_scope(actor, scope_id)
        return render(_scope(actor, scope))

    @extend_schema(request=Input, responses=ScopeOut, summary="Rename a scope (admins)")
    def patch(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        scope = services.scope_update(scope=scope, **serializer.validated_data)
        return render(_scope(actor, scope))

    @extend_schema(responses={204: None}, summary="Delete a scope (admins)")
    def delete(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        services.scope_delete(scope=scope)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RoleField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        super().__init__(choices=ROLE_NAMES, **kwargs)

    def to_internal_value(self, data):
        return Role.from_name(super().to_internal_value(data))


class MemberListView(APIView):
    @extend_schema_serializer(component_name="MemberAdd")
    class Input(StrictSerializer):
        username = StrictCharField(max_length=150)
        role = RoleField()

    @extend_schema(responses=MemberListOut, summary="Members of a scope (admins)")
    def get(self, request, scope_id: str):
        scope = access.administrable_scope(actor_for_request(request), scope_id)
        members = selectors.scope_members(scope=scope)
        return render(MemberListOut(results=[MemberOut.of(m) for m in members]))

    @extend_schema(request=Input, responses={201: MemberOut}, summary="Add a member (admins)")
    def post(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = services.membership_add(scope=scope, **serializer.validated_data)
        return render(MemberOut.of(membership), status=status.HTTP_201_CREATED)


class MemberDetailView(APIView):
    @extend_schema_serializer(component_name="MemberChange")
    class Input(StrictSerializer):
        role = RoleField()

    @extend_schema(request=Input, responses=MemberOut, summary="Change a member's role (admins)")
    def patch(self, request, scope_id: str, username: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = services.membership_change_role(
            scope=scope, username=username, role=serializer.validated_data["role"]
        )
        return render(MemberOut.of(membership))

    @extend_schema(responses={204: None}, summary="Remove a member (admins) or leave (yourself)")
    def delete(self, request, scope_id: str, username: str):
        actor = actor_for_request(request)
        if username == actor.user.get_username():
            services.scope_leave(actor=actor, scope_id=scope_id)
        else:
            scope = access.administrable_scope(actor, scope_id)
            services.membership_remove(scope=scope, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenListView(APIView):
    @extend_schema_serializer(component_name="TokenCreate")
    class Input(StrictSerializer):
        name = StrictCharField(max_length=120)
        read_only = StrictBooleanField(required=False, default=False)
        scopes = serializers.ListField(
            child=StrictCharField(max_length=40), required=False, allow_null=True, max_length=100
        )
        expires_at = serializers.DateTimeField(required=False, allow_null=True)

    @extend_schema(responses=TokenListOut, summary="Your API tokens", operation_id="v1_tokens_list")
    def get(self, request):
        tokens = selectors.own_tokens(actor=actor_for_request(request))
        return render(TokenListOut(results=[TokenOut.of(token) for token in tokens]))

    @extend_schema(
        request=Input,
        responses={201: TokenCreatedOut},
        summary="Create a token (secret shown once)",
    )
    def post(self, request):
        actor = actor_for_request(request)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        scope_ids = data.get("scopes")
        scopes = None
        if scope_ids is not None:
            try:
                scopes = [access.readable_scope(actor, scope_id) for scope_id in scope_ids]
            except NotFound as exc:
                raise exc.naming("scopes") from None
        issued = services.token_create(
            actor=actor,
            name=data["name"],
            read_only=data["read_only"],
            scopes=scopes,
            expires_at=data.get("expires_at"),
        )
        answer = TokenCreatedOut.of(issued.token, token=issued.secret)
        return render(answer, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    @extend_schema(responses=TokenOut, summary="One of your tokens")
    def get(self, request, token_id: str):
        token = selectors.own_token(actor=actor_for_request(request), public_id=token_id)
        return render(TokenOut.of(token))

    @extend_schema(responses=TokenOut, summary="Revoke a token, effective at once")
    def delete(self, request, token_id: str):
        actor = actor_for_request(request)
        token = selectors.own_token(actor=actor, public_id=token_id)
        return render(TokenOut.of(services.token_revoke(actor=actor, token=token)))
