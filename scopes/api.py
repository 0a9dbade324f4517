"""REST endpoints for scopes, members, tokens and the caller (`/api/v1/`)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from scopes import access, selectors, services
from scopes.models import ApiToken, Membership, Role, Scope, ScopeKind
from zeromemory.core.actor import Actor, actor_for_request
from zeromemory.core.errors import NotFound
from zeromemory.core.serializers import StrictBooleanField, StrictCharField, StrictSerializer

ROLE_NAMES = [role.slug for role in Role]


def _role_name(value: int | None) -> str | None:
    return Role(value).slug if value is not None else None


class ScopeOut(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    kind = serializers.CharField()
    name = serializers.CharField()
    slug = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    role = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()

    def get_role(self, scope: Scope) -> str | None:
        return _role_name(self.context["roles"].get(scope.id))


def _scope_out(actor: Actor, scopes: list[Scope]) -> ScopeOut:
    roles = access.roles_in(actor, scopes)
    return ScopeOut(scopes, many=True, context={"roles": roles})


class MeView(APIView):
    class Output(serializers.Serializer):
        username = serializers.CharField()
        email = serializers.CharField()
        is_staff = serializers.BooleanField()
        token = serializers.DictField(allow_null=True)
        scopes = ScopeOut(many=True)

    @extend_schema(responses=Output, summary="The caller: user, token and readable scopes")
    def get(self, request):
        actor = actor_for_request(request)
        scopes = list(access.readable_scopes(actor).select_related("owner"))
        token = None
        if actor.token is not None:
            token = {
                "id": actor.token.public_id,
                "name": actor.token.name,
                "read_only": actor.token.read_only,
            }
        return Response(
            {
                "username": actor.user.get_username(),
                "email": actor.user.email,
                "is_staff": actor.user.is_staff,
                "token": token,
                "scopes": _scope_out(actor, scopes).data,
            }
        )


class ScopeListView(APIView):
    @extend_schema_serializer(component_name="ScopeCreate")
    class Input(StrictSerializer):
        name = StrictCharField(max_length=120)
        slug = StrictCharField(max_length=50)
        kind = serializers.ChoiceField(choices=[ScopeKind.TEAM, ScopeKind.PROJECT])

    @extend_schema(responses=ScopeOut(many=True), summary="Scopes the caller can read")
    def get(self, request):
        actor = actor_for_request(request)
        scopes = list(access.readable_scopes(actor).select_related("owner"))
        return Response({"results": _scope_out(actor, scopes).data})

    @extend_schema(request=Input, responses={201: ScopeOut}, summary="Create a team or project")
    def post(self, request):
        actor = actor_for_request(request)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        scope = services.scope_create(actor=actor, **serializer.validated_data)
        return Response(_scope_out(actor, [scope]).data[0], status=status.HTTP_201_CREATED)


class ScopeDetailView(APIView):
    @extend_schema_serializer(component_name="ScopeUpdate")
    class Input(StrictSerializer):
        name = StrictCharField(max_length=120, required=False)
        slug = StrictCharField(max_length=50, required=False)

    @extend_schema(responses=ScopeOut, summary="One scope")
    def get(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.readable_scope(actor, scope_id)
        return Response(_scope_out(actor, [scope]).data[0])

    @extend_schema(request=Input, responses=ScopeOut, summary="Rename a scope (admins)")
    def patch(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        scope = services.scope_update(actor=actor, scope=scope, **serializer.validated_data)
        return Response(_scope_out(actor, [scope]).data[0])

    @extend_schema(responses={204: None}, summary="Delete a scope (admins)")
    def delete(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        services.scope_delete(actor=actor, scope=scope)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberOut(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.SerializerMethodField()
    joined_at = serializers.DateTimeField(source="created_at")

    def get_role(self, membership: Membership) -> str:
        return Role(membership.role).slug


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

    @extend_schema(responses=MemberOut(many=True), summary="Members of a scope (admins)")
    def get(self, request, scope_id: str):
        scope = access.administrable_scope(actor_for_request(request), scope_id)
        return Response(
            {"results": MemberOut(selectors.scope_members(scope=scope), many=True).data}
        )

    @extend_schema(request=Input, responses={201: MemberOut}, summary="Add a member (admins)")
    def post(self, request, scope_id: str):
        actor = actor_for_request(request)
        scope = access.administrable_scope(actor, scope_id)
        serializer = self.Input(data=request.data)
        serializer.is_valid(raise_exception=True)
        membership = services.membership_add(actor=actor, scope=scope, **serializer.validated_data)
        return Response(MemberOut(membership).data, status=status.HTTP_201_CREATED)


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
            actor=actor, scope=scope, username=username, role=serializer.validated_data["role"]
        )
        return Response(MemberOut(membership).data)

    @extend_schema(responses={204: None}, summary="Remove a member (admins) or leave (yourself)")
    def delete(self, request, scope_id: str, username: str):
        actor = actor_for_request(request)
        if username == actor.user.get_username():
            services.scope_leave(actor=actor, scope_id=scope_id)
        else:
            scope = access.administrable_scope(actor, scope_id)
            services.membership_remove(actor=actor, scope=scope, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TokenOut(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    name = serializers.CharField()
    prefix = serializers.CharField()
    read_only = serializers.BooleanField()
    scopes = serializers.SerializerMethodField()
    active = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField()

    def get_scopes(self, token: ApiToken) -> list[str] | None:
        if not token.scope_restricted:
            return None
        return [scope.public_id for scope in token.restricted_scopes.all()]

    def get_active(self, token: ApiToken) -> bool:
        return token.is_active()


class TokenCreatedOut(TokenOut):
    token = serializers.CharField(help_text=_("The secret. Shown once; store it now."))


class TokenListView(APIView):
    @extend_schema_serializer(component_name="TokenCreate")
    class Input(StrictSerializer):
        name = StrictCharField(max_length=120)
        read_only = StrictBooleanField(required=False, default=False)
        scopes = serializers.ListField(
            child=StrictCharField(max_length=40), required=False, allow_null=True, max_length=100
        )
        expires_at = serializers.DateTimeField(required=False, allow_null=True)

    @extend_schema(responses=TokenOut(many=True), summary="Your API tokens")
    def get(self, request):
        tokens = selectors.own_tokens(actor=actor_for_request(request))
        return Response({"results": TokenOut(tokens, many=True).data})

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
        body = dict(TokenOut(issued.token).data, token=issued.secret)
        return Response(body, status=status.HTTP_201_CREATED)


class TokenDetailView(APIView):
    @extend_schema(responses=TokenOut, summary="One of your tokens")
    def get(self, request, token_id: str):
        token = selectors.own_token(actor=actor_for_request(request), public_id=token_id)
        return Response(TokenOut(token).data)

    @extend_schema(responses=TokenOut, summary="Revoke a token, effective at once")
    def delete(self, request, token_id: str):
        actor = actor_for_request(request)
        token = selectors.own_token(actor=actor, public_id=token_id)
        return Response(TokenOut(services.token_revoke(actor=actor, token=token)).data)
