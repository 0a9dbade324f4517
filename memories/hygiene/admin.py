"""The admin's review queue: each pair side by side (content, kind, scope, authors and ranks,
provenance, original language), the actions on the change page, bulk keep-both, and a retry for
pairs the judge failed on. Staff act as people (rank 2); nothing here deletes a memory."""

from __future__ import annotations

from functools import partial

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from memories.hygiene import review, service
from memories.hygiene.auto_resolution import RANKS
from memories.models import Conflict, ConflictAction, ConflictStatus, Memory, Resolution
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.errors import DomainError

ACTION_CHOICES = [("", "—"), *Resolution.choices, ("undo", _("Undo the last resolution"))]


def _staff(request) -> Actor:
    return Actor(user=request.user, surface=Surface.DASHBOARD, client_name="admin")


class ConflictForm(forms.ModelForm):
    action = forms.ChoiceField(label=_("Action"), choices=ACTION_CHOICES, required=False)

    class Meta:
        model = Conflict
        fields: list[str] = []


def _side(memory: Memory | None) -> str:
    if memory is None:
        return format_html("<td>—</td>")
    provenance = format_html_join(
        "",
        "<li>{} · {} · {}</li>",
        (
            (row.get_source_kind_display(), row.client_name or "—", row.created_at.date())
            for row in memory.provenance.all()
        ),
    )
    original = (
        format_html("<p><em>{} ({})</em></p>", memory.content_original, memory.content_lang)
        if memory.content_original
        else ""
    )
    return format_html(
        '<td style="vertical-align:top;width:50%"><p><a href="{}">{}</a> · {} · {}</p>'
        "<p>{}</p>{}<p>{}: {} · rank {} · {}</p><ul>{}</ul></td>",
        reverse("admin:memories_memory_change", args=[memory.pk]),
        memory.public_id,
        memory.kind_id,
        memory.state.label,
        memory.content,
        original,
        _("author"),
        memory.get_author_kind_display(),
        RANKS.get(memory.author_kind, 0),
        memory.scope.name,
        provenance,
    )


class ActionInline(admin.TabularInline):
    model = ConflictAction
    extra = 0
    can_delete = False
    fields = ["resolution", "automatic", "by", "retired", "kept", "created_at", "undone_at"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Conflict)
class ConflictAdmin(admin.ModelAdmin):
    form = ConflictForm
    list_display = [
        "public_id",
        "scope",
        "verdict",
        "confidence",
        "status",
        "resolution",
        "created_at",
    ]
    list_filter = ["verdict", "status", "scope"]
    search_fields = ["public_id", "memory_a__public_id", "memory_b__public_id"]
    readonly_fields = ["side_by_side", *(f.name for f in Conflict._meta.fields if f.name != "id")]
    fields = [
        "side_by_side",
        "action",
        "status",
        "verdict",
        "confidence",
        "rationale",
        "similarity",
        "resolution",
        "resolved_automatically",
        "resolved_by",
        "resolved_at",
        "challenged_by",
        "attempts",
        "error",
        "created_at",
        "judged_at",
    ]
    inlines = [ActionInline]
    actions = ["keep_both", "retry_judging"]
    ordering = ["-id"]
    list_select_related = ["scope"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description=_("the pair"))
    def side_by_side(self, conflict: Conflict) -> str:
        return format_html(
            "<table><tr><th>A</th><th>B</th></tr><tr>{}{}</tr></table>",
            _side(conflict.memory_a),
            _side(conflict.memory_b),
        )

    def save_model(self, request, obj, form, change) -> None:
        # Nothing on the form edits the row itself: the chosen action goes through the service.
        action = form.cleaned_data.get("action")
        if not action:
            return
        try:
            review.conflict_resolve(actor=_staff(request), conflict=obj, action=action)
        except DomainError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    @admin.action(description=_("Keep both memories of the selected open conflicts"))
    def keep_both(self, request, queryset) -> None:
        kept, skipped = 0, []
        for conflict in queryset:
            try:  # the service checks under the row's lock that it is (still) open
                review.conflict_resolve(
                    actor=_staff(request), conflict=conflict, action="keep_both"
                )
            except DomainError as exc:
                skipped.append(f"{conflict.public_id}: {exc.message}")
            else:
                kept += 1
        self.message_user(
            request,
            ngettext("%(n)d conflict kept both.", "%(n)d conflicts kept both.", kept) % {"n": kept},
            messages.SUCCESS,
        )
        if skipped:
            self.message_user(
                request,
                _("Skipped %(why)s") % {"why": " ".join(skipped)},
                messages.WARNING,
            )

    @admin.action(description=_("Judge the selected failed pairs again"))
    def retry_judging(self, request, queryset) -> None:
        failed = list(queryset.filter(status=ConflictStatus.FAILED))
        with transaction.atomic():
            for conflict in failed:
                if claim := service.conflict_retry(conflict=conflict):
                    transaction.on_commit(
                        partial(service.JUDGING.enqueue, row_id=conflict.id, claim=claim)
                    )
        self.message_user(request, f"{len(failed)} queued again.", messages.SUCCESS)
