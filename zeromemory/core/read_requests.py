"""Which requests are reads (their tenant reads may go to a replica), and the writes that follow.

Reads: POST recall, context and briefing, and GET or HEAD of the API and the dashboard. Every
other request that succeeded for a signed-in user counts as that user's write, stored before the
answer leaves, so the next read of theirs on any web host goes to the primary
(`zeromemory.core.routing`). Sign-in, the admin, OAuth, health and metrics are never reads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse

from zeromemory.core import routing

logger = logging.getLogger("zeromemory.routing")

READ_POSTS = {"api-recall", "api-context", "api-briefing"}
SAFE_METHODS = {"GET", "HEAD"}
NEVER_READS = (
    "/admin/",
    "/oauth/",
    "/.well-known/",
    "/login",
    "/logout",
    "/signup",
    "/healthz",
    "/readyz",
    "/metrics",
    "/static/",
    "/mcp",
)


def is_read(request: HttpRequest) -> bool:
    if request.path.startswith(NEVER_READS):
        return False
    if request.method in SAFE_METHODS:
        return True
    match = request.resolver_match
    return request.method == "POST" and match is not None and match.url_name in READ_POSTS


def _user(request: HttpRequest) -> Callable[[], object]:
    # DRF sets the token's user on the HttpRequest once it authenticated it.
    return lambda: getattr(request, "user", None)


class ReadRoutingMiddleware:
    """Marks read requests for `ReplicaRouter`; notes the writes of the other requests."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.enabled = bool(routing.replica_aliases())

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not self.enabled:
            return self.get_response(request)
        state = routing.Routing(user=_user(request), reads=False)
        with routing.routed(state):
            request.zm_routing = state  # process_view decides once the URL is resolved
            response = self.get_response(request)
        if not state.reads and request.method not in SAFE_METHODS and response.status_code < 400:
            user = getattr(request, "user", None)
            if user is not None and user.is_authenticated:
                try:
                    routing.note_write(user.pk)
                except DatabaseError:  # the write itself succeeded; its answer still goes out
                    logger.warning("could not note a write for read-your-writes", exc_info=True)
        return response

    def process_view(self, request: HttpRequest, view, args, kwargs) -> None:
        state = getattr(request, "zm_routing", None)
        if state is not None:
            state.reads = is_read(request)
        return None
