"""The admin's view of capture: chunks with their status and results, and a retry for failed
ones. Chunk text is shown redacted (as stored); nothing here creates or deletes memories."""

from __future__ import annotations

from functools import partial

from django.contrib import admin, messages
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from memories.capture import service, tasks
from memories.models import Chunk, ChunkStatus


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = [
        "public_id",
        "user",
        "scope",
        "source_kind",
        "client",
        "status",
        "kept",
        "attempts",
        "created_at",
    ]
    list_filter = ["status", "source_kind", "client", "scope"]
    search_fields = ["public_id", "chunk_hash", "conversation_id", "source_path"]
    readonly_fields = [field.name for field in Chunk._meta.fields]
    actions = ["retry_extraction"]
    ordering = ["-id"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description=_("Retry extraction of the selected failed chunks"))
    def retry_extraction(self, request, queryset) -> None:
        retried = 0
        for chunk in queryset.filter(status=ChunkStatus.FAILED):
            claim = service.chunk_retry(chunk=chunk)
            transaction.on_commit(partial(tasks.enqueue_extraction, chunk_id=chunk.id, claim=claim))
            retried += 1
        self.message_user(
            request,
            ngettext("%(n)d chunk queued again.", "%(n)d chunks queued again.", retried)
            % {"n": retried},
            messages.SUCCESS,
        )
