"""REST endpoints for the caller, scopes, members and tokens (included under /api/v1/)."""

from django.urls import path

import zeromemory.core.converters  # noqa: F401 - registers the id and username converters
from scopes import api

urlpatterns = [
    path("me", api.MeView.as_view(), name="api-me"),
    path("scopes", api.ScopeListView.as_view(), name="api-scopes"),
    path("scopes/<id:scope_id>", api.ScopeDetailView.as_view(), name="api-scope"),
    path("scopes/<id:scope_id>/members", api.MemberListView.as_view(), name="api-scope-members"),
    path(
        "scopes/<id:scope_id>/members/<username:username>",
        api.MemberDetailView.as_view(),
        name="api-scope-member",
    ),
    path("tokens", api.TokenListView.as_view(), name="api-tokens"),
    path("tokens/<id:token_id>", api.TokenDetailView.as_view(), name="api-token"),
]
