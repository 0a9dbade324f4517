"""Prometheus metrics at /metrics (prometheus_client), off unless ZM_METRICS is set.

Web and worker processes each count into files under PROMETHEUS_MULTIPROC_DIR (set by the
settings, under the data dir), and a scrape of any web process adds them all up: the client
library's multi-process mode. Figures read from the database (queue depth, memories by
translation status) are computed at scrape time. With ZM_METRICS_TOKEN set (required with
ZM_SECURE) a scrape needs `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import os
import time
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

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


class DatabaseCollector(Collector):
    """Gauges read from the database when scraped."""

    def collect(self) -> Iterator[Metric]:
        from django.db.models import Count
        from django_q.brokers import get_broker

        from memories.models import Memory

        queue = GaugeMetricFamily("zm_queue_depth", "Tasks waiting in the django-q2 queue.")
        queue.add_metric([], get_broker().queue_size())
        yield queue
        memories = GaugeMetricFamily(
            "zm_memories", "Memories by translation status.", labels=["translation_status"]
        )
        counts = Memory.objects.values_list("translation_status").annotate(n=Count("id"))
        for status, count in counts.order_by("translation_status"):
            memories.add_metric([status], count)
        yield memories


def _authorized(request: HttpRequest) -> bool:
    expected = settings.METRICS_TOKEN
    if not expected:
        return True
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), expected)


@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    from zeromemory.views import not_found

    if not settings.METRICS:
        return not_found(request, Exception("metrics are off"))
    if not _authorized(request):
        response = HttpResponse("unauthorized\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="zero-memory metrics"'
        return response
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)  # every process's files, added up
    else:  # this process only (the directory was not set before the client library loaded)
        for metric in (REQUESTS, REQUEST_SECONDS, OPERATION_SECONDS):
            registry.register(metric)
    registry.register(DatabaseCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
