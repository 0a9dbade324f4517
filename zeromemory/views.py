"""Project-level views: health and error pages that answer JSON under /api/."""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.defaults import page_not_found, server_error

from zeromemory.api.errors import json_error
from zeromemory.outage import RETRY_AFTER_SECONDS, response_for_current_exception, unavailable


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any database failure means unhealthy
        unavailable(exc)  # notes the outage (one log line) when it is one
        response = JsonResponse({"status": "error", "database": str(exc)[:200]}, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        response._has_been_logged = True
        return response
    return JsonResponse({"status": "ok", "database": "ok"})


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
