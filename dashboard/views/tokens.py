"""API tokens: create (the secret is shown once, in the answer to the create), list, revoke."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from dashboard.common import INVALID, actor_for, add_domain_error, domain_errors, render_page
from dashboard.forms import TokenCreateForm
from scopes import access, selectors, services
from scopes.oauth import selectors as oauth_selectors
from zeromemory.core.errors import DomainError


def _page(request: HttpRequest, *, form=None, issued=None, status: int = 200) -> HttpResponse:
    actor = actor_for(request)
    scopes = access.readable_scopes(actor).order_by("kind", "name", "id")
    context = {
        "form": form or TokenCreateForm(scopes=scopes),
        # A grant's token is listed with its client, apart from the tokens people created.
        "tokens": selectors.own_tokens(actor=actor).filter(oauth_grant__isnull=True),
        "grants": oauth_selectors.own_grants(actor=actor),
        "issued": issued,
    }
    return render_page(
        request, "dashboard/tokens.html", "dashboard/partials/tokens.html", context, status=status
    )


@never_cache
@login_required
@domain_errors
def token_list(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request)
    actor = actor_for(request)
    readable = access.readable_scopes(actor)
    form = TokenCreateForm(request.POST, scopes=readable.order_by("kind", "name", "id"))
    if form.is_valid():
        data = form.cleaned_data
        restricted = list(readable.filter(public_id__in=data["scopes"])) if data["scopes"] else None
        try:
            issued = services.token_create(
                actor=actor,
                name=data["name"],
                read_only=data["read_only"],
                scopes=restricted,
                expires_at=form.expiry,
            )
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            # Rendered, not redirected: the secret exists only in this answer.
            return _page(request, issued=issued)
    return _page(request, form=form, status=INVALID)


@login_required
@require_POST
@domain_errors
def token_revoke(request: HttpRequest, token_id: str) -> HttpResponse:
    actor = actor_for(request)
    token = selectors.own_token(actor=actor, public_id=token_id)
    services.token_revoke(actor=actor, token=token)
    messages.success(request, _("Token “%(name)s” was revoked.") % {"name": token.name})
    if request.htmx:
        return _page(request)
    return redirect("dashboard:tokens")
