"""The metric families every process counts into (prometheus_client), and the request middleware.

Kept free of app imports so every app may record into them; /metrics itself (the scrape, with
the figures read from the database) is `zeromemory.metrics`. In multi-process mode the client
library must see PROMETHEUS_MULTIPROC_DIR before it is first imported: the settings set it.
"""

from __future__ import annotations

import time

from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "zm_http_requests_total", "HTTP requests answered, by route.", ["method", "route", "status"]
)
REQUEST_SECONDS = Histogram(
    "zm_http_request_duration_seconds", "Time to answer an HTTP request, by route.", ["route"]
)
OPERATION_SECONDS = Histogram(
    "zm_operation_duration_seconds",
    "Time of recall, build_context, briefing and remember calls on every surface.",
    ["operation", "outcome"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
JOB_OUTCOMES = Counter(
    "zm_job_outcomes",
    "Background job runs (translation, extraction, judging), by job and outcome.",
    ["job", "outcome"],
)


def observe_job(*, job: str, outcome: str) -> None:
    JOB_OUTCOMES.labels(job=job, outcome=outcome).inc()


def observe_operation(*, operation: str, outcome: str, seconds: float) -> None:
    OPERATION_SECONDS.labels(operation=operation, outcome=outcome).observe(seconds)


def observe_request(*, method: str, route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(method=method, route=route, status=str(status)).inc()
    REQUEST_SECONDS.labels(route=route).observe(seconds)


class RequestMetricsMiddleware:
    """Count and time every request by its URL pattern (never the raw path: ids stay out)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None and match.route else "unmatched"
        observe_request(
            method=request.method or "",
            route=route,
            status=response.status_code,
            seconds=time.perf_counter() - started,
        )
        return response
