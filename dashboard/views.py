"""Dashboard views: thin, each calls one selector and renders a template."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from scopes.access import Actor, readable_scopes


@login_required
def home(request: HttpRequest) -> HttpResponse:
    actor = Actor(user=request.user, surface="dashboard")
    scopes = readable_scopes(actor).select_related("owner")
    return render(request, "dashboard/home.html", {"scopes": scopes})
