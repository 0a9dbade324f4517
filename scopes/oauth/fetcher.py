"""Fetching a client ID metadata document: django-oauth-toolkit's guarded fetcher.

The toolkit's rules, with a stricter address check: https URLs only; a host that resolves to any
loopback, private, link-local or otherwise non-public address (the toolkit's judgement, and IPv6
forms it would let through, such as IPv4-compatible addresses and the local NAT64 prefix) is
refused before a connection is opened; the connection goes to the address checked (no second
lookup, so DNS rebinding cannot move it), follows no redirect and stops at the size and time
limits. Where this server runs (ZM_PUBLIC_URL) changes none of
that. The one exception is the operator's: the exact https origins in ZM_OAUTH_CIMD_ALLOW_ORIGINS
may be fetched whatever they resolve to, still over https with a verified certificate, and still
at the address resolved once.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from urllib.parse import SplitResult, urlsplit

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from scopes.oauth.clients import redirect_uri_refusal


def _origin_key(parts: SplitResult) -> tuple[str, int]:
    return (parts.hostname or "").lower(), parts.port or 443


def allowed_origin(parts: SplitResult) -> bool:
    """Whether the operator allowed this URL's origin although it may not be public."""
    return _origin_key(parts) in {
        _origin_key(urlsplit(origin)) for origin in settings.OAUTH_CIMD_ALLOW_ORIGINS
    }


# IPv6 forms that embed or stand for an address the toolkit's check would judge public although
# it may lead inside: IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) addresses, the
# local-use NAT64 prefix (RFC 8215) and the deprecated site-local range.
_INSIDE_V6 = [
    ipaddress.IPv6Network(net)
    for net in ("::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "fec0::/10")
]


def is_public(ip: str) -> bool:
    """The toolkit's judgement, and none of the IPv6 forms above."""
    if not cimd._ip_is_public(ip):
        return False
    address = ipaddress.ip_address(ip)
    return not (
        isinstance(address, ipaddress.IPv6Address) and any(address in n for n in _INSIDE_V6)
    )


def _addresses(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise cimd.CIMDError(f"could not resolve client_id host: {exc}") from exc
    if not infos:
        raise cimd.CIMDError("client_id host did not resolve to any address")
    return [info[4][0] for info in infos]


class Fetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id):
        metadata, max_age = self._fetch(client_id)
        uris = metadata.get("redirect_uris")
        for uri in uris if isinstance(uris, list) else []:
            if (refusal := redirect_uri_refusal(uri)) is not None:
                raise cimd.CIMDError(refusal)
        return metadata, max_age

    def _fetch(self, client_id):
        parsed = cimd._validate_client_id_url(client_id)
        port = parsed.port or 443
        addresses = _addresses(parsed.hostname, port)
        # Public addresses only (every address the host resolves to, or none is tried), but
        # for an origin the operator allowed.
        inside = next((ip for ip in addresses if not is_public(ip)), None)
        if inside is not None and not allowed_origin(urlsplit(client_id)):
            raise cimd.CIMDError(f"client_id host resolves to a non-public address ({inside})")
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        headers = {"Host": parsed.netloc, "Accept": "application/json, application/*+json"}
        deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        failure: Exception | None = None
        for ip in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            pool = urllib3.HTTPSConnectionPool(
                host=ip,
                port=port,
                timeout=urllib3.Timeout(connect=remaining, read=remaining, total=remaining),
                retries=False,
                maxsize=1,
                ssl_context=ssl.create_default_context(),
                server_hostname=parsed.hostname,
            )
            try:
                response = pool.urlopen(
                    "GET", path, headers=headers, redirect=False, preload_content=False
                )
                try:
                    return self._read_document(response)
                finally:
                    response.release_conn()
            except urllib3.exceptions.HTTPError as exc:
                failure = exc
            finally:
                pool.close()
        raise cimd.CIMDError(f"could not fetch client_id document: {failure}")
