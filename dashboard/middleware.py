"""The API's per-user rate on the dashboard and the admin too: one budget per user across REST,
MCP and the pages, so a session cannot search or write past the rate a token is held to."""

from __future__ import annotations

import math
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from zeromemory.core.throttling import retry_after

# Counted by their own surface (DRF's throttle, the MCP server) or not a user's request at all.
NOT_COUNTED = ("/api/", "/mcp", "/static/", "/healthz", "/readyz", "/metrics")


class RateLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and not request.path.startswith(NOT_COUNTED):
            seconds = retry_after(user)
            if seconds is not None:
                wait = math.ceil(seconds)
                answer = render(request, "429.html", {"wait": wait}, status=429)
                answer["Retry-After"] = str(wait)
                return answer
        return self.get_response(request)
