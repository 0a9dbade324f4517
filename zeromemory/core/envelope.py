"""One answer shape for every API error: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, JsonResponse
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from zeromemory.core.errors import DomainError, error_body
from zeromemory.core.outage import retry_headers, unavailable
from zeromemory.core.parsers import BodyError, BodyTooLarge

logger = logging.getLogger(__name__)


def _first_message(details: Any) -> str:
    if isinstance(details, dict):
        for field, value in details.items():
            return f"{field}: {_first_message(value)}"
    if isinstance(details, list) and details:
        return _first_message(details[0])
    return str(details)


def _validation_details(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {
            ("body" if key == "non_field_errors" else key): _validation_details(value)
            for key, value in detail.items()
        }
    if isinstance(detail, list):
        return [_validation_details(item) for item in detail]
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    headers: dict[str, str] = {}
    outage = unavailable(exc)
    if outage is not None:
        exc = outage
        headers.update(retry_headers())
    if isinstance(exc, DomainError):
        code, http, message, details = exc.code, exc.status, exc.message, exc.details
    elif isinstance(exc, BodyError):
        message = str(exc.detail)
        http = 413 if isinstance(exc, BodyTooLarge) else 400
        code, details = "validation_failed", {"body": [message]}
    elif isinstance(exc, RequestDataTooBig):
        message = _("The body is too large.")
        code, http, details = "validation_failed", 413, {"body": [message]}
    elif isinstance(exc, exceptions.ValidationError):
        details = _validation_details(exc.detail)
        if not isinstance(details, dict):
            details = {"body": details}
        code, http, message = "validation_failed", 400, _first_message(details)
    elif isinstance(exc, exceptions.ParseError):
        message = str(exc.detail)
        code, http, details = "validation_failed", 400, {"body": [message]}
    elif isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        code, http, message, details = "unauthorized", 401, str(exc.detail), None
        auth_header = context["view"].get_authenticate_header(context["request"])
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
    elif isinstance(exc, exceptions.PermissionDenied | PermissionDenied):
        message = str(getattr(exc, "detail", "")) or _("You may not do this.")
        code, http, details = "forbidden", 403, None
    elif isinstance(exc, exceptions.NotFound | Http404):
        code, http, message, details = "not_found", 404, _("Not found."), None
    elif isinstance(exc, exceptions.Throttled):
        code, http, message = "rate_limited", 429, str(exc.detail)
        details = {"retry_after": exc.wait}
        if exc.wait is not None:
            headers["Retry-After"] = str(int(exc.wait) + 1)
    elif isinstance(exc, exceptions.MethodNotAllowed):
        code, http, message, details = "method_not_allowed", 405, str(exc.detail), None
    elif isinstance(exc, exceptions.UnsupportedMediaType):
        message = str(exc.detail)
        code, http, details = "validation_failed", 415, {"body": [message]}
    elif isinstance(exc, exceptions.NotAcceptable):
        code, http, message, details = "validation_failed", 406, str(exc.detail), None
    elif isinstance(exc, exceptions.APIException):
        code, http, message, details = "internal", exc.status_code, str(exc.detail), None
    else:
        logger.exception("unhandled error in %s", context.get("view"))
        code, http = "internal", status.HTTP_500_INTERNAL_SERVER_ERROR
        message, details = _("Something went wrong on our side."), None
    set_rollback()
    response = Response(error_body(code, message, details), status=http, headers=headers)
    if outage is not None:
        response._has_been_logged = True  # the outage logs one line, not one per request
    return response


def json_error(code: str, message: str, http: int) -> JsonResponse:
    return JsonResponse(error_body(code, message), status=http)
