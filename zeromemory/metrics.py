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
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from zeromemory.core.metrics import JOB_OUTCOMES, OPERATION_SECONDS, REQUEST_SECONDS, REQUESTS


class DatabaseCollector(Collector):
    """Gauges read from the database when scraped."""

    def collect(self) -> Iterator[Metric]:
        from django_q.brokers import get_broker

        from memories.selectors import translation_status_counts

        queue = GaugeMetricFamily("zm_queue_depth", "Tasks waiting in the django-q2 queue.")
        queue.add_metric([], get_broker().queue_size())
        yield queue
        memories = GaugeMetricFamily(
            "zm_memories", "Memories by translation status.", labels=["translation_status"]
        )
        for status, count in translation_status_counts().items():
            memories.add_metric([status], count)
        yield memories


def _authorized(request: HttpRequest) -> bool:
    expected = settings.METRICS_TOKEN
    if not expected:
        return True
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    # Compared as bytes: compare_digest refuses str with non-ASCII characters (a TypeError).
    return scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


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
        for metric in (REQUESTS, REQUEST_SECONDS, OPERATION_SECONDS, JOB_OUTCOMES):
            registry.register(metric)
    registry.register(DatabaseCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
