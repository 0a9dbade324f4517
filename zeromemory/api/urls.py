"""Every REST endpoint under /api/v1/."""

from django.urls import path

from scopes import api as scopes_api

urlpatterns = [
    path("me", scopes_api.MeView.as_view(), name="api-me"),
    path("scopes", scopes_api.ScopeListView.as_view(), name="api-scopes"),
    path("scopes/<str:scope_id>", scopes_api.ScopeDetailView.as_view(), name="api-scope"),
    path(
        "scopes/<str:scope_id>/members",
        scopes_api.MemberListView.as_view(),
        name="api-scope-members",
    ),
    path(
        "scopes/<str:scope_id>/members/<str:username>",
        scopes_api.MemberDetailView.as_view(),
        name="api-scope-member",
    ),
    path("tokens", scopes_api.TokenListView.as_view(), name="api-tokens"),
    path("tokens/<str:token_id>", scopes_api.TokenDetailView.as_view(), name="api-token"),
]
