"""Every REST endpoint under /api/v1/."""

from django.urls import path

import zeromemory.converters  # noqa: F401 - registers the id and username converters
from memories import api as memories_api
from memories import api_read
from scopes import api as scopes_api

urlpatterns = [
    path("me", scopes_api.MeView.as_view(), name="api-me"),
    path("scopes", scopes_api.ScopeListView.as_view(), name="api-scopes"),
    path("scopes/<id:scope_id>", scopes_api.ScopeDetailView.as_view(), name="api-scope"),
    path(
        "scopes/<id:scope_id>/members",
        scopes_api.MemberListView.as_view(),
        name="api-scope-members",
    ),
    path(
        "scopes/<id:scope_id>/members/<username:username>",
        scopes_api.MemberDetailView.as_view(),
        name="api-scope-member",
    ),
    path("tokens", scopes_api.TokenListView.as_view(), name="api-tokens"),
    path("tokens/<id:token_id>", scopes_api.TokenDetailView.as_view(), name="api-token"),
    path("memories", memories_api.MemoryListView.as_view(), name="api-memories"),
    path("memories/batch", memories_api.MemoryBatchView.as_view(), name="api-memories-batch"),
    path("memories/<id:memory_id>", memories_api.MemoryDetailView.as_view(), name="api-memory"),
    path("memories/<id:memory_id>/forget", memories_api.ForgetView.as_view(), name="api-forget"),
    path("memories/<id:memory_id>/restore", memories_api.RestoreView.as_view(), name="api-restore"),
    path(
        "memories/<id:memory_id>/supersede",
        memories_api.SupersedeView.as_view(),
        name="api-supersede",
    ),
    path("recall", api_read.RecallView.as_view(), name="api-recall"),
    path("context", api_read.ContextView.as_view(), name="api-context"),
    path("briefing", api_read.BriefingView.as_view(), name="api-briefing"),
    path("activity", api_read.ActivityListView.as_view(), name="api-activity"),
]
