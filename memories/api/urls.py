"""REST endpoints for memories and the read path (included under /api/v1/)."""

from django.urls import path

import zeromemory.core.converters  # noqa: F401 - registers the id and username converters
from memories.api import (
    conflicts,
    entities,
    ingest,
    insights,
    links,
    memories,
    portability,
    read,
    rules,
)

urlpatterns = [
    path("memories", memories.MemoryListView.as_view(), name="api-memories"),
    path("memories/batch", memories.MemoryBatchView.as_view(), name="api-memories-batch"),
    path("memories/used", rules.MarkUsedView.as_view(), name="api-memories-used"),
    path("memories/move", memories.MoveView.as_view(), name="api-memories-move"),
    path("memories/<id:memory_id>", memories.MemoryDetailView.as_view(), name="api-memory"),
    path("memories/<id:memory_id>/history", memories.HistoryView.as_view(), name="api-history"),
    path("memories/<id:memory_id>/forget", memories.ForgetView.as_view(), name="api-forget"),
    path("memories/<id:memory_id>/restore", memories.RestoreView.as_view(), name="api-restore"),
    path(
        "memories/<id:memory_id>/supersede",
        memories.SupersedeView.as_view(),
        name="api-supersede",
    ),
    path(
        "memories/<id:memory_id>/challenge",
        conflicts.ChallengeView.as_view(),
        name="api-challenge",
    ),
    path("memories/<id:memory_id>/links", links.MemoryLinksView.as_view(), name="api-links"),
    path(
        "memories/<id:memory_id>/links/<id:link_id>",
        links.MemoryLinkView.as_view(),
        name="api-link",
    ),
    path("entities", entities.EntityListView.as_view(), name="api-entities"),
    path("entities/<id:entity_id>", entities.EntityDetailView.as_view(), name="api-entity"),
    path(
        "entities/<id:entity_id>/aliases",
        entities.EntityAliasView.as_view(),
        name="api-entity-aliases",
    ),
    path(
        "entities/<id:entity_id>/merge", entities.EntityMergeView.as_view(), name="api-entity-merge"
    ),
    path(
        "entities/<id:entity_id>/merge/undo",
        entities.EntityMergeUndoView.as_view(),
        name="api-entity-merge-undo",
    ),
    path(
        "entities/<id:entity_id>/split", entities.EntitySplitView.as_view(), name="api-entity-split"
    ),
    path(
        "entities/<id:entity_id>/split/undo",
        entities.EntitySplitUndoView.as_view(),
        name="api-entity-split-undo",
    ),
    path("memories/<id:memory_id>/share", memories.ShareView.as_view(), name="api-share"),
    path("memories/<id:memory_id>/promote", rules.RulePromoteView.as_view(), name="api-promote"),
    path("scopes/<id:scope_id>/benchmark", read.BenchmarkView.as_view(), name="api-benchmark"),
    path("conflicts", conflicts.ConflictListView.as_view(), name="api-conflicts"),
    path(
        "conflicts/resolve",
        conflicts.ConflictBulkResolveView.as_view(),
        name="api-conflicts-resolve",
    ),
    path("conflicts/<id:conflict_id>", conflicts.ConflictDetailView.as_view(), name="api-conflict"),
    path(
        "conflicts/<id:conflict_id>/resolve",
        conflicts.ConflictResolveView.as_view(),
        name="api-conflict-resolve",
    ),
    path("rules", rules.RuleListView.as_view(), name="api-rules"),
    path("rules/<id:rule_id>/approve", rules.RuleApproveView.as_view(), name="api-rule-approve"),
    path("rules/<id:rule_id>/reject", rules.RuleRejectView.as_view(), name="api-rule-reject"),
    path("rules/<id:rule_id>/move", rules.RuleMoveView.as_view(), name="api-rule-move"),
    path("recall", read.RecallView.as_view(), name="api-recall"),
    path("context", read.ContextView.as_view(), name="api-context"),
    path("briefing", read.BriefingView.as_view(), name="api-briefing"),
    path("activity", read.ActivityListView.as_view(), name="api-activity"),
    path("ingest", ingest.IngestView.as_view(), name="api-ingest"),
    path("ingest/<id:chunk_id>", ingest.ChunkDetailView.as_view(), name="api-chunk"),
    path("import", ingest.ImportView.as_view(), name="api-import"),
    path("export", portability.ExportView.as_view(), name="api-export"),
    path(
        "exports/<str:ticket>", portability.ExportDownloadView.as_view(), name="api-export-download"
    ),
    path(
        "scopes/<id:scope_id>/export",
        portability.ScopeExportView.as_view(),
        name="api-scope-export",
    ),
    path(
        "scopes/<id:scope_id>/import-export",
        portability.ImportExportView.as_view(),
        name="api-scope-import-export",
    ),
    path(
        "scopes/<id:scope_id>/import-from/<slug:system>",
        portability.ImportFromView.as_view(),
        name="api-scope-import-from",
    ),
    path(
        "scopes/<id:scope_id>/overview",
        insights.ScopeOverviewView.as_view(),
        name="api-scope-overview",
    ),
    path(
        "scopes/<id:scope_id>/hygiene-scan",
        conflicts.ScopeHygieneScanView.as_view(),
        name="api-scope-hygiene-scan",
    ),
    path("insights", insights.InsightsView.as_view(), name="api-insights"),
    path("insights/session", insights.SessionReceiptView.as_view(), name="api-insights-session"),
]
