"""The protected resources this server issues tokens for, and how they challenge a caller.

A resource is named by its canonical URL under ZM_PUBLIC_URL: `/mcp` and `/api/v1`. A token is
bound to the one it was issued for (RFC 8707) and refused by the other.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

MCP = "mcp"
API = "api/v1"


def resource_url(path: str) -> str:
    return f"{settings.PUBLIC_URL}/{path}"


def resource_metadata_url(path: str) -> str:
    return f"{settings.PUBLIC_URL}/.well-known/oauth-protected-resource/{path}"


def canonical(url: str) -> str:
    """Scheme and host in lower case, no trailing slash: how two resource URLs are compared."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def known_resource(url: str) -> bool:
    return canonical(url) in {canonical(resource_url(MCP)), canonical(resource_url(API))}


def bound_to(resources: list[str], path: str) -> bool:
    """Whether a token's resources are exactly this one (an unbound token is bound to none)."""
    wanted = canonical(resource_url(path))
    return bool(resources) and all(canonical(url) == wanted for url in resources)


def all_scopes() -> str:
    return f"{settings.OAUTH_SCOPE_READ} {settings.OAUTH_SCOPE_WRITE}"


def challenge(path: str, error: str = "", description: str = "", scope: str = "") -> str:
    """`WWW-Authenticate` for a request to the resource at `path` (RFC 6750, RFC 9728)."""
    value = (
        f'Bearer realm="zero-memory", resource_metadata="{resource_metadata_url(path)}", '
        f'scope="{scope or all_scopes()}"'
    )
    if error:
        value += f', error="{error}", error_description="{description}"'
    return value
