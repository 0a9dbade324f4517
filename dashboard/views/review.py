"""Review: the hygiene queue of the scopes you administer, each pair side by side, with the
actions (keep both, supersede either way, merge, forget either, dismiss) and undo."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from dashboard.common import actor_for, domain_errors, next_page_url, render_page, wants_partial
from dashboard.forms import ReviewFilterForm
from memories import selectors
from memories.hygiene import review
from memories.hygiene import selectors as queue
from memories.models import ConflictStatus
from zeromemory.core.errors import ConflictError, ValidationFailed
from zeromemory.core.paging import Page

PAGE_SIZE = 20


def _with_verbatim(conflicts: list) -> list:
    """The memory cards show each memory's verbatim phrases, as on the memory list."""
    selectors.with_verbatim([memory for conflict in conflicts for memory in conflict.memories])
    return conflicts


@login_required
@domain_errors
def review_list(request: HttpRequest) -> HttpResponse:
    form = ReviewFilterForm(request.GET)
    conflicts, next_cursor, status = [], None, 200
    if form.is_valid():
        data = form.cleaned_data
        conflicts, next_cursor = queue.conflict_list(
            actor=actor_for(request),
            filters=queue.ConflictFilters(
                scope=data["scope"] or None, status=data["status"] or ConflictStatus.OPEN
            ),
            page=Page(data["cursor"] or None, PAGE_SIZE),
        )
    else:
        status = 400
    context = {
        "form": form,
        "conflicts": _with_verbatim(conflicts),
        "next_url": next_page_url(request, "dashboard:review", next_cursor),
    }
    partial = "dashboard/partials/review_results.html"
    return render_page(request, "dashboard/review.html", partial, context, status=status)


@login_required
@require_POST
@domain_errors
def review_resolve(request: HttpRequest, conflict_id: str) -> HttpResponse:
    actor = actor_for(request)
    conflict = queue.conflict_for_review(actor=actor, public_id=conflict_id)
    action = request.POST.get("action", "")
    try:
        review.conflict_resolve(actor=actor, conflict=conflict, action=action)
    except (ConflictError, ValidationFailed) as exc:
        messages.error(request, exc.message)
    else:
        done = _("Resolution undone.") if action == "undo" else _("Conflict resolved.")
        messages.success(request, done)
    if wants_partial(request):
        conflict = queue.conflict_for_review(actor=actor, public_id=conflict_id)
        context = {"conflict": _with_verbatim([conflict])[0], "swap_messages": True}
        return render(request, "dashboard/partials/conflict_card.html", context)
    return redirect("dashboard:review")
