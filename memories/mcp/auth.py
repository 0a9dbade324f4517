"""Who an MCP call runs as: the bearer-token door in front of /mcp, and the credential tools use.

Over HTTP every request to /mcp passes `BearerTokenMiddleware` first. A missing, unknown,
revoked or expired token is answered 401 with a JSON error body and `WWW-Authenticate` before
the request reaches the MCP machinery, so no tool ever runs for it. An accepted request carries
its token to the tools in the `current_credential` context variable: the SDK hands each message
to its handler in the context of the HTTP request that delivered it. Over stdio the command sets
the variable once, to a lookup of the secret it was given, so a token revoked while the client
runs stops working on the next call.

The middleware also checks Host and Origin against ALLOWED_HOSTS, the same list Django applies
to every other path; the MCP app is not behind Django's own check.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from scopes.authentication import token_for_secret
from scopes.models import ApiToken
from scopes.oauth import resources
from scopes.oauth.selectors import InsufficientScope
from zeromemory.core.errors import error_body
from zeromemory.core.outage import Unavailable, orm_call, retry_headers

TokenSource = Callable[[], ApiToken | None]

# A callable run in the ORM thread that returns the caller's token (None when it is not valid).
current_credential: ContextVar[TokenSource | None] = ContextVar("zm_mcp_credential", default=None)


def lookup_token(secret: str) -> ApiToken | None:
    with orm_call():
        return token_for_secret(secret, resource=resources.MCP)


def _allowed_hosts() -> list[str]:
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]  # what Django allows in DEBUG
    return allowed


def _host_allowed(host: str | None) -> bool:
    if not host:
        return False
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, _allowed_hosts())


def _origin_allowed(origin: str | None) -> bool:
    """Browsers send Origin; a page on another site must not reach /mcp through DNS rebinding."""
    if not origin:
        return True
    netloc = urlsplit(origin).netloc
    return bool(netloc) and _host_allowed(netloc)


async def _send_error(
    send: Send, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps(error_body(code, message)).encode()
    raw_headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    raw_headers += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})


def _challenge(error: str = "", description: str = "") -> dict[str, str]:
    """Where to authorize (RFC 9728): an MCP client signs in by OAuth from this alone."""
    return {"WWW-Authenticate": resources.challenge(resources.MCP, error, description)}


class BearerTokenMiddleware:
    """Authenticate every request to the wrapped MCP app with `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not _host_allowed(headers.get("host")) or not _origin_allowed(headers.get("origin")):
            await _send_error(
                send,
                403,
                "forbidden",
                "This host or origin is not allowed; add it to ZM_ALLOWED_HOSTS.",
            )
            return
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret:
            await _send_error(
                send,
                401,
                "unauthorized",
                "Send the header Authorization: Bearer <token> with an API token of zero-memory.",
                _challenge(),
            )
            return
        try:
            token = await sync_to_async(lookup_token, thread_sensitive=True)(secret)
        except Unavailable as exc:
            await _send_error(send, exc.status, exc.code, exc.message, retry_headers())
            return
        except InsufficientScope:
            message = "This token's OAuth scope does not allow reading memories."
            challenge = resources.challenge(
                resources.MCP, "insufficient_scope", message, resources.all_scopes()
            )
            await _send_error(send, 403, "forbidden", message, {"WWW-Authenticate": challenge})
            return
        if token is None:
            await _send_error(
                send,
                401,
                "unauthorized",
                "The token is not valid: unknown, revoked or expired. Create a new one.",
                _challenge("invalid_token", "The token is unknown, revoked or expired."),
            )
            return
        if scope.get("method") in ("GET", "DELETE"):
            # Stateless: no event stream to open (a GET would hold its connection for ever) and
            # no session to end.
            await _send_error(
                send,
                405,
                "method_not_allowed",
                "This endpoint is stateless: send each JSON-RPC message with POST.",
                {"Allow": "POST"},
            )
            return
        # Each request is authenticated on its own (the endpoint keeps no sessions); the SDK
        # reads the caller's identity from the scope.
        identity = AccessToken(token=token.public_id, client_id=token.public_id, scopes=[])
        scope = {**scope, "user": AuthenticatedUser(identity)}
        reset = current_credential.set(lambda: token)
        try:
            await self.app(scope, receive, send)
        finally:
            current_credential.reset(reset)
