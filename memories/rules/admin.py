"""The admin's rules: candidates, approved and rejected rules by scope, with their earlier
wordings; staff approve or reject in bulk through the same services as the dashboard."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from memories.models import Rule, RuleStatus, RuleVersion
from memories.rules import decisions
from zeromemory.core.actor import Actor, Surface


class RuleVersionInline(admin.TabularInline):
    model = RuleVersion
    extra = 0
    can_delete = False
    readonly_fields = ("number", "text", "edited_by", "created_at")

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Rule)
class RuleAdmin(admin.ModelAdmin):
    list_display = (
        "public_id",
        "text",
        "status",
        "scope",
        "position",
        "conversations",
        "created_at",
    )
    list_filter = ("status", "scope")
    search_fields = ("public_id", "text", "memory__public_id")
    ordering = ("scope", "status", "position", "created_at")
    readonly_fields = (
        "public_id",
        "scope",
        "memory",
        "status",
        "position",
        "conversations",
        "decided_by",
        "decided_at",
        "created_at",
    )
    fields = (*readonly_fields[:4], "text", *readonly_fields[4:])
    inlines = [RuleVersionInline]
    actions = ["approve", "reject"]

    def has_add_permission(self, request) -> bool:
        return False  # rules grow from usage

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # reject instead: a rejected rule is not proposed again

    def save_model(self, request, obj, form, change) -> None:
        """Editing the wording approves the rule in those words (the old text is a version)."""
        text = form.cleaned_data["text"]
        obj.text = Rule.objects.get(pk=obj.pk).text
        decisions.rule_approve(actor=_staff(request), rule=obj, text=text)

    @admin.action(description=_("Approve the selected rules"))
    def approve(self, request, queryset) -> None:
        self._each(request, queryset, decisions.rule_approve)

    @admin.action(description=_("Reject the selected rules"))
    def reject(self, request, queryset) -> None:
        self._each(request, queryset.exclude(status=RuleStatus.REJECTED), decisions.rule_reject)

    def _each(self, request, queryset, decide) -> None:
        rules = list(queryset.select_related("memory", "scope"))
        for rule in rules:
            decide(actor=_staff(request), rule=rule)
        done = ngettext("%(n)d rule changed.", "%(n)d rules changed.", len(rules))
        self.message_user(request, done % {"n": len(rules)}, messages.SUCCESS)


def _staff(request) -> Actor:
    return Actor(user=request.user, surface=Surface.DASHBOARD, client_name="admin")
