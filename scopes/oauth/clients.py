"""What a client may register (RFC 7591) or publish in its metadata document: redirect URIs that
cannot escape, the authorization code grant only, and a rate of registrations per address."""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

from axes.helpers import get_client_ip_address
from django.conf import settings
from django.http import HttpRequest
from django.utils.translation import gettext as _

from zeromemory.core.throttling import count_in_window

GRANT_TYPES = {"authorization_code", "refresh_token"}
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_DOCUMENT_BYTES = 16 * 1024


def is_loopback(host: str | None) -> bool:
    """127.0.0.0/8, ::1 or localhost."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def redirect_uri_refusal(uri: object) -> str | None:
    """Why this redirect URI is refused, or None: https, plain http to a loopback address only
    (RFC 8252), a listed private-use scheme; no fragment, no userinfo, no white space."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        return _("A redirect URI must be a string of at most %(n)d characters.") % {
            "n": MAX_URI_LENGTH
        }
    if any(ch.isspace() or ord(ch) < 32 or ch == "\\" for ch in uri):
        return _("A redirect URI cannot hold white space, control characters or backslashes.")
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return _("The redirect URI is not a valid URI.")
    scheme = parts.scheme.lower()
    allowed = settings.OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"]
    if scheme not in allowed:
        return _("Redirect URIs use https, http to a loopback address, or %(schemes)s.") % {
            "schemes": ", ".join(s for s in allowed if s not in ("http", "https"))
        }
    if "#" in uri or parts.username is not None or parts.password is not None:
        return _("A redirect URI cannot have a fragment or user information.")
    if scheme in ("http", "https") and not parts.hostname:
        return _("A redirect URI needs a host.")
    if scheme == "http" and not is_loopback(parts.hostname):
        return _("Plain http redirect URIs are allowed only to a loopback address.")
    return None


def registration_refusal(body: bytes) -> str | None:
    """Why a registration request is refused before django-oauth-toolkit reads it, or None."""
    if len(body) > MAX_DOCUMENT_BYTES:
        return _("The client metadata is too large.")
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _("The request body must be a JSON object.")
    if not isinstance(data, dict):
        return _("The request body must be a JSON object.")
    grants = data.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not set(grants) <= GRANT_TYPES or not grants:
        return _("Only the authorization_code and refresh_token grant types are supported.")
    if data.get("response_types", ["code"]) != ["code"]:
        return _("Only the code response type is supported.")
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        return _("redirect_uris must list between 1 and %(n)d URIs.") % {"n": MAX_REDIRECT_URIS}
    for uri in uris:
        if (refusal := redirect_uri_refusal(uri)) is not None:
            return refusal
    return None


def registrations_wait(request: HttpRequest) -> float | None:
    """Count one registration from the caller's address: None if allowed, else seconds to wait."""
    address = get_client_ip_address(request) or "unknown"
    hits, wait = count_in_window(f"oauth-dcr:{address}", 3600)
    return None if hits <= settings.OAUTH_DCR_PER_HOUR else max(wait, 1.0)
