"""The admin site: the kind catalogue, and memory hygiene (find and retry stuck translations).

Memories are add-only: the admin creates none (writes go through `remember()`), deletes one only
by the purge action (a legal request, its reason audited), and edits through `memory_edit`, like
every other surface, so that a change is versioned, re-embedded and re-queued for translation.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db import transaction
from django.db.models import Q
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from modeltranslation.admin import TranslationAdmin

from memories.canonical import service as canonical
from memories.canonical import tasks
from memories.capture import admin as capture_admin  # noqa: F401 - registers the chunk admin
from memories.hygiene import admin as hygiene_admin  # noqa: F401 - registers the review queue
from memories.models import (
    Memory,
    MemoryKind,
    MemoryVersion,
    Provenance,
    TranslationStatus,
)
from memories.portability import admin as portability_admin  # noqa: F401 - the purge audit
from memories.portability.erasure import memory_purge
from memories.rules import admin as rules_admin  # noqa: F401 - registers the rules
from memories.services.lifecycle import memory_edit
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError


@admin.register(MemoryKind)
class MemoryKindAdmin(TranslationAdmin):
    """Labels and descriptions are edited per dashboard language (modeltranslation tabs)."""

    list_display = ["slug", "label", "weight", "half_life_days", "position"]
    list_editable = ["weight", "half_life_days", "position"]
    search_fields = ["slug", "label", "description"]

    def _is_staff(self, request) -> bool:
        return request.user.is_active and request.user.is_staff

    # The catalogue is editorial content: any staff member may maintain it. Deleting a kind is
    # left to the model permission (and PROTECT stops it while memories use the kind).
    def has_view_permission(self, request, obj=None) -> bool:
        return self._is_staff(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._is_staff(request)

    def has_add_permission(self, request) -> bool:
        return self._is_staff(request)

    def has_module_permission(self, request) -> bool:
        return self._is_staff(request)


class NeedsTranslationFilter(admin.SimpleListFilter):
    """Memories whose canonicalization needs a look: failed, or still pending."""

    title = _("translation queue")
    parameter_name = "queue"

    def lookups(self, request, model_admin):
        return [
            ("attention", _("Failed or pending")),
            ("failed", _("Failed")),
            ("waiting", _("Pending, waiting for the next attempt")),
            ("retrying", _("Pending after a failed attempt")),
        ]

    def queryset(self, request, queryset):
        pending = Q(translation_status=TranslationStatus.PENDING)
        match self.value():
            case "attention":
                return queryset.filter(pending | Q(translation_status=TranslationStatus.FAILED))
            case "failed":
                return queryset.filter(translation_status=TranslationStatus.FAILED)
            case "waiting":
                return queryset.filter(pending)
            case "retrying":
                return queryset.filter(pending, translation_attempts__gt=0)
        return queryset


class ProvenanceInline(admin.TabularInline):
    model = Provenance
    extra = 0
    can_delete = False
    fields = [
        "created_at",
        "source_kind",
        "absorbed",
        "created_by",
        "client_name",
        "conversation_id",
        "source_path",
        "verbatim",
        "written_text",
    ]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class MemoryVersionInline(admin.TabularInline):
    model = MemoryVersion
    extra = 0
    can_delete = False
    fields = ["number", "created_at", "edited_by", "kind", "content", "content_lang"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    list_display = [
        "public_id",
        "short_content",
        "scope",
        "kind",
        "content_lang",
        "translation_status",
        "translation_attempts",
        "translation_next_at",
        "is_valid",
        "created_at",
    ]
    list_filter = [
        NeedsTranslationFilter,
        "translation_status",
        # `valid` is a generated column: Django's admin picks filters by the field's class.
        ("valid", admin.BooleanFieldListFilter),
        "kind",
        "author_kind",
        "scope",
    ]
    list_select_related = ["scope", "kind"]
    search_fields = ["public_id", "content", "content_original"]
    date_hierarchy = "created_at"
    actions = ["retry_translation", "purge"]
    inlines = [ProvenanceInline, MemoryVersionInline]
    # Only content and kind are editable, and only through memory_edit (see save_model).
    fields = [
        "public_id",
        "scope",
        "kind",
        "content",
        "content_original",
        "content_lang",
        "content_hash",
        "content_revision",
        "translation_status",
        "translation_attempts",
        "translation_error",
        "translation_next_at",
        "translation_claim",
        "translation_lease_until",
        "author_kind",
        "agent_name",
        "created_by",
        "valid",
        "forgotten_at",
        "forgotten_reason",
        "superseded_by",
        "superseded_at",
        "restored_at",
        "created_at",
        "updated_at",
    ]
    readonly_fields = [name for name in fields if name not in {"kind", "content"}]

    @admin.display(description=_("valid"), boolean=True, ordering="valid")
    def is_valid(self, memory: Memory) -> bool:
        return memory.valid

    @admin.display(description=_("content"))
    def short_content(self, memory: Memory) -> str:
        return memory.content if len(memory.content) <= 80 else memory.content[:79] + "…"

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        kind = form.base_fields.get("kind")
        if kind is not None:  # kinds in use cannot be deleted (PROTECT); don't offer it here
            kind.widget.can_delete_related = False
        return form

    def has_add_permission(self, request) -> bool:
        return False  # memories are written through remember(), never created bare

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # add-only: forget and supersede invalidate, nothing deletes

    def save_model(self, request, obj, form, change) -> None:
        changed = set(form.changed_data) & {"content", "kind"}
        if not changed:
            return
        try:
            memory_edit(
                actor=Actor(user=request.user, surface="admin"),
                memory=obj,
                content=form.cleaned_data["content"] if "content" in changed else None,
                kind=form.cleaned_data["kind"].slug if "kind" in changed else None,
            )
        except DomainError as exc:  # refused (a secret, a duplicate): nothing was changed
            self.message_user(request, exc.message, messages.ERROR)

    @admin.action(description=_("Purge (delete for a legal request)"))
    def purge(self, request, queryset):
        """Delete the selected memories for good, with a reason kept in the purge audit. Staff
        only; the everyday removal is forget, which deletes nothing."""
        if not request.user.is_staff:
            return None
        reason = request.POST.get("reason", "").strip()
        if request.POST.get("confirm") != "yes" or not reason:
            return TemplateResponse(
                request,
                "admin/memories/purge.html",
                {
                    **self.admin_site.each_context(request),
                    "memories": list(queryset.select_related("scope")),
                    "selected": helpers.ACTION_CHECKBOX_NAME,
                    "missing_reason": request.POST.get("confirm") == "yes",
                    "opts": self.model._meta,
                    "title": _("Purge memories"),
                },
            )
        memories = list(queryset.select_related("scope"))
        for memory in memories:
            memory_purge(memory=memory, by=request.user, reason=reason)
        self.message_user(
            request,
            ngettext("%(n)d memory purged.", "%(n)d memories purged.", len(memories))
            % {"n": len(memories)},
            messages.SUCCESS,
        )
        return None

    @admin.action(description=_("Retry translation"))
    def retry_translation(self, request, queryset) -> None:
        queued = 0
        for memory in queryset:
            claim = canonical.retry_translation(memory=memory)
            if claim is None:
                continue
            queued += 1
            transaction.on_commit(
                lambda memory_id=memory.id, claim=claim: tasks.enqueue_canonicalization(
                    memory_id=memory_id, claim=claim
                )
            )
        skipped = queryset.count() - queued
        if queued:
            self.message_user(
                request,
                ngettext(
                    "%(n)d memory queued for translation.",
                    "%(n)d memories queued for translation.",
                    queued,
                )
                % {"n": queued},
                messages.SUCCESS,
            )
        if skipped:
            self.message_user(
                request,
                ngettext(
                    "%(n)d memory needs no translation (translated or English).",
                    "%(n)d memories need no translation (translated or English).",
                    skipped,
                )
                % {"n": skipped},
                messages.WARNING,
            )
