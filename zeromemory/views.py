"""Project-level views: health, readiness, and error pages that answer JSON under /api/."""

from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.defaults import page_not_found, server_error

from zeromemory import heartbeat
from zeromemory.core.envelope import json_error
from zeromemory.core.outage import RETRY_AFTER_SECONDS, response_for_current_exception, unavailable

logger = logging.getLogger("zeromemory.health")


def _database_failed(exc: Exception) -> str:
    """What a probe answers for a database failure: never the error's text (it names hosts,
    ports, users, database names: the probes answer anyone). The text goes to the log: an outage
    logs one line when it starts, any other failure each time."""
    if unavailable(exc) is None:
        logger.error("health check: the database failed: %s", exc, exc_info=exc)
    return "unavailable"


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any database failure means unhealthy
        response = JsonResponse({"status": "error", "database": _database_failed(exc)}, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response._has_been_logged = True
        return response
    return JsonResponse({"status": "ok", "database": "ok"})


_migrated = False  # once every migration is applied, later checks skip reading the files


def _migrations_pending() -> int:
    global _migrated
    if _migrated:
        return 0
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    _migrated = pending == 0
    return pending


@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Ready to serve: the database answers, every migration is applied, a worker is alive."""
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
        pending = _migrations_pending()
        checks["migrations"] = "ok" if not pending else f"{pending} not applied"
        checks["worker"] = (
            "ok" if heartbeat.worker_alive() else "no worker heartbeat in the last minute"
        )
    except Exception as exc:  # noqa: BLE001 - any database failure means not ready
        checks["database"] = _database_failed(exc)
    ready = all(value == "ok" for value in checks.values()) and len(checks) == 3
    response = JsonResponse({"status": "ok" if ready else "error", **checks})
    if not ready:
        response.status_code = 503
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response._has_been_logged = True
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(("/api/", "/mcp"))


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return json_error("not_found", _("Not found."), 404)
    return page_not_found(request, exception)


def internal_error(request: HttpRequest) -> HttpResponse:
    outage = response_for_current_exception(request)  # a middleware's query met an outage
    if outage is not None:
        return outage
    if _is_api(request):
        return json_error("internal", _("Something went wrong on our side."), 500)
    return server_error(request)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return json_error("validation_failed", _("The request could not be read."), 400)
    from django.views.defaults import bad_request as default_bad_request

    return default_bad_request(request, exception)
