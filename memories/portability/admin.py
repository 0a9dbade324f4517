"""The purge audit in the admin (the purge itself is an action on memories, `memories.admin`)."""

from __future__ import annotations

from django.contrib import admin

from memories.models import PurgeRecord


@admin.register(PurgeRecord)
class PurgeRecordAdmin(admin.ModelAdmin):
    """The purge audit: who purged which memory, when and why (never what it said)."""

    list_display = ["memory_public_id", "scope_public_id", "purged_by", "purged_at", "reason"]
    search_fields = ["memory_public_id", "scope_public_id", "reason"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
