from django.contrib import admin
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from scopes.models import ApiToken, Membership, Scope


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Scope)
class ScopeAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "kind", "owner", "public_id", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name", "slug", "public_id", "owner__username"]
    readonly_fields = ["public_id", "created_at"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["scope", "user", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["scope__name", "scope__slug", "user__username"]
    autocomplete_fields = ["scope", "user"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "prefix",
        "user",
        "read_only",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    ]
    list_filter = ["read_only", "scope_restricted"]
    search_fields = ["name", "prefix", "user__username", "public_id"]
    readonly_fields = ["public_id", "prefix", "created_at", "last_used_at", "revoked_at"]
    exclude = ["secret_hash"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        # Secrets are issued by the API or the dashboard, where they are shown once.
        return False

    @admin.action(description=_("Revoke the selected tokens"))
    def revoke(self, request, queryset) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, _("%(n)d token(s) revoked.") % {"n": count})
