"""Activity: your own recall, build_context and briefing calls, with the exact query."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse

from dashboard.common import actor_for, next_page_url, render_page
from dashboard.forms import ActivityFilterForm
from memories.activity.log import ActivityFilters, activity_list
from zeromemory.core.paging import Page

PAGE_SIZE = 50


@login_required
def activity(request: HttpRequest) -> HttpResponse:
    form = ActivityFilterForm(request.GET)
    rows, next_cursor, status = [], None, 200
    if form.is_valid():
        data = form.cleaned_data
        rows, next_cursor = activity_list(
            actor=actor_for(request),
            filters=ActivityFilters(
                operation=data["operation"] or None,
                surface=data["surface"] or None,
                outcome=data["outcome"] or None,
            ),
            page=Page(data["cursor"] or None, PAGE_SIZE),
        )
    else:
        status = 400
    next_url = next_page_url(request, "dashboard:activity", next_cursor)
    more = bool(form.is_bound and form.is_valid() and form.cleaned_data["cursor"])
    context = {"form": form, "rows": rows, "next_url": next_url}
    partial = (
        "dashboard/partials/activity_page.html"
        if more
        else "dashboard/partials/activity_results.html"
    )
    return render_page(request, "dashboard/activity.html", partial, context, status=status)
