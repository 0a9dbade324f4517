"""Scopes: the ones you belong to, creating team and project scopes, members and roles, leaving."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from dashboard.common import INVALID, actor_for, add_domain_error, domain_errors, render_page
from dashboard.forms import MemberAddForm, MemberRoleForm, ScopeCreateForm, ScopeRenameForm
from scopes import access, selectors, services
from scopes.models import Role, Scope
from zeromemory.core.errors import DomainError


def _scopes_with_roles(request: HttpRequest):
    actor = actor_for(request)
    return (
        access.readable_scopes_with_roles(actor)
        .select_related("owner")
        .order_by("kind", "name", "id")
    )


@login_required
def scope_list(request: HttpRequest) -> HttpResponse:
    actor = actor_for(request)
    form = ScopeCreateForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                scope = services.scope_create(actor=actor, **form.cleaned_data)
            except DomainError as exc:
                add_domain_error(form, exc)
            else:
                messages.success(request, _("Scope created. You are its admin."))
                return redirect("dashboard:scope", scope_id=scope.public_id)
        status = INVALID
    scopes = [(scope, Role(scope.my_role)) for scope in _scopes_with_roles(request)]
    return render(
        request, "dashboard/scope_list.html", {"scopes": scopes, "form": form}, status=status
    )


def _members_context(request: HttpRequest, scope: Scope, **forms) -> dict:
    return {
        "scope": scope,
        "members": [
            (membership, Role(membership.role))
            for membership in selectors.scope_members(scope=scope)
        ],
        "add_form": forms.get("add_form") or MemberAddForm(),
        "role_choices": Role.choices,
        "member_error": forms.get("member_error", ""),
    }


def _scope_page(request: HttpRequest, scope: Scope, *, status: int = 200, **forms) -> HttpResponse:
    actor = actor_for(request)
    role = access.role_in(actor, scope)
    context = {
        "scope": scope,
        "role": role,
        "is_admin": role is not None and role >= Role.ADMIN and not actor.read_only,
        "can_write": access.can_write(actor, scope),
        "rename_form": forms.pop("rename_form", None)
        or ScopeRenameForm(initial={"name": scope.name, "slug": scope.slug}),
    }
    if context["is_admin"]:
        context.update(_members_context(request, scope, **forms))
    return render(request, "dashboard/scope_detail.html", context, status=status)


@login_required
@domain_errors
def scope_detail(request: HttpRequest, scope_id: str) -> HttpResponse:
    return _scope_page(request, access.readable_scope(actor_for(request), scope_id))


@login_required
@require_POST
@domain_errors
def scope_rename(request: HttpRequest, scope_id: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    form = ScopeRenameForm(request.POST)
    if form.is_valid():
        try:
            services.scope_update(scope=scope, **form.cleaned_data)
        except DomainError as exc:
            add_domain_error(form, exc)
            scope.refresh_from_db()
        else:
            messages.success(request, _("Scope saved."))
            return redirect("dashboard:scope", scope_id=scope.public_id)
    return _scope_page(request, scope, status=INVALID, rename_form=form)


@login_required
@require_POST
@domain_errors
def scope_delete(request: HttpRequest, scope_id: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    try:
        services.scope_delete(scope=scope)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("dashboard:scope", scope_id=scope.public_id)
    messages.success(request, _("Scope deleted."))
    return redirect("dashboard:scopes")


@login_required
@require_POST
@domain_errors
def scope_leave(request: HttpRequest, scope_id: str) -> HttpResponse:
    try:
        services.scope_leave(actor=actor_for(request), scope_id=scope_id)
    except DomainError as exc:
        if exc.status == 404:
            raise
        messages.error(request, exc.message)
        return redirect("dashboard:scope", scope_id=scope_id)
    messages.success(request, _("You left the scope."))
    return redirect("dashboard:scopes")


def _members(request: HttpRequest, scope: Scope, *, status: int = 200, **forms) -> HttpResponse:
    """The members panel alone for htmx, the scope page otherwise."""
    if request.htmx and not request.htmx.boosted:
        return render_page(
            request,
            "dashboard/scope_detail.html",
            "dashboard/partials/scope_members.html",
            _members_context(request, scope, **forms),
            status=status,
        )
    if status == 200:
        return redirect("dashboard:scope", scope_id=scope.public_id)
    return _scope_page(request, scope, status=status, **forms)


@login_required
@require_POST
@domain_errors
def member_add(request: HttpRequest, scope_id: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    form = MemberAddForm(request.POST)
    if form.is_valid():
        try:
            services.membership_add(scope=scope, **form.cleaned_data)
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            messages.success(request, _("%(u)s was added.") % {"u": form.cleaned_data["username"]})
            return _members(request, scope)
    return _members(request, scope, status=INVALID, add_form=form)


@login_required
@require_POST
@domain_errors
def member_role(request: HttpRequest, scope_id: str, username: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        return _members(request, scope, status=INVALID, member_error=form.errors["role"][0])
    try:
        services.membership_change_role(
            scope=scope, username=username, role=form.cleaned_data["role"]
        )
    except DomainError as exc:
        if exc.status == 404:
            raise
        return _members(request, scope, status=INVALID, member_error=exc.message)
    messages.success(request, _("The role of %(u)s was changed.") % {"u": username})
    return _members(request, scope)


@login_required
@require_POST
@domain_errors
def member_remove(request: HttpRequest, scope_id: str, username: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    try:
        services.membership_remove(scope=scope, username=username)
    except DomainError as exc:
        if exc.status == 404:
            raise
        return _members(request, scope, status=INVALID, member_error=exc.message)
    messages.success(request, _("%(u)s was removed.") % {"u": username})
    if username == actor.user.get_username():
        if request.htmx:
            return HttpResponseClientRedirect(reverse("dashboard:scopes"))
        return redirect("dashboard:scopes")
    return _members(request, scope)
