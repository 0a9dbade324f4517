"""Domain errors raised by services and selectors; every surface maps them to its own answer.

The codes are the stable codes of the API and MCP error contract.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class DomainError(Exception):
    code = "internal"
    status = 500

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def naming(self, field: str) -> DomainError:
        """The same error, with its message under `field` in the details (which input it was)."""
        named = type(self).__new__(type(self))
        DomainError.__init__(named, self.message, details={field: [self.message]})
        return named


class ValidationFailed(DomainError):
    code = "validation_failed"
    status = 400

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, details={field: [message]})
        self.field = field


class Forbidden(DomainError):
    code = "forbidden"
    status = 403


class ReauthenticationRequired(Forbidden):
    """A person signed in, but not recently enough for this: confirm the password first."""

    code = "reauthentication_required"


class NotFound(DomainError):
    code = "not_found"
    status = 404


class ConflictError(DomainError):
    """The request clashes with the current state: already decided, already forgotten, a key reused.

    Not the hygiene model `memories.models.Conflict` (a judged pair of memories); the wire code
    stays "conflict".
    """

    code = "conflict"
    status = 409


class Unauthorized(DomainError):
    code = "unauthorized"
    status = 401


class RateLimited(DomainError):
    code = "rate_limited"
    status = 429


class ErrorBody(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class ErrorOut(BaseModel):
    """The one error answer of every surface: REST bodies, MCP tool errors, the MCP door."""

    error: ErrorBody


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}
