"""Fetching a client ID metadata document: django-oauth-toolkit's guarded fetcher, plus loopback.

The toolkit's fetcher takes https URLs only, refuses hosts that resolve to a private,
link-local or loopback address, connects to the address it checked (no second lookup), follows
no redirect and stops at the size and time limits. One exception is added here: a server that
itself runs on loopback (ZM_PUBLIC_URL names 127.0.0.1, ::1 or localhost: a developer's machine)
may fetch a document served on loopback, still over https with a verified certificate.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from urllib.parse import urlsplit

import urllib3
from django.conf import settings
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from scopes.oauth.clients import is_loopback, redirect_uri_refusal


def server_on_loopback() -> bool:
    return is_loopback(urlsplit(settings.PUBLIC_URL).hostname)


def _loopback_addresses(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise cimd.CIMDError(f"could not resolve client_id host: {exc}") from exc
    addresses = [info[4][0] for info in infos]
    if not addresses or not all(ipaddress.ip_address(ip).is_loopback for ip in addresses):
        raise cimd.CIMDError("client_id host is not only loopback")
    return addresses


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
        if not (server_on_loopback() and is_loopback(parsed.hostname)):
            return super().fetch(client_id)
        port = parsed.port or 443
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        headers = {"Host": parsed.netloc, "Accept": "application/json"}
        deadline = time.monotonic() + oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        failure: Exception | None = None
        for ip in _loopback_addresses(parsed.hostname, port):
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
