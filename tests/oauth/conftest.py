"""Fixtures the OAuth tests share."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.oauth.e2e_support import self_signed, serve_document


@pytest.fixture
def documents(tmp_path, monkeypatch, settings):
    """Serve a metadata document on loopback https, trusted by this process, from an origin the
    operator allowed (ZM_OAUTH_CIMD_ALLOW_ORIGINS): no other non-public origin is fetched."""
    cert, key = self_signed(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    servers = []

    def serve(document: dict) -> str:
        server, url = serve_document(cert, key, document)
        servers.append(server)
        parts = urlsplit(url)
        settings.OAUTH_CIMD_ALLOW_ORIGINS = [
            *settings.OAUTH_CIMD_ALLOW_ORIGINS,
            f"{parts.scheme}://{parts.netloc}",
        ]
        return url

    yield serve
    for server in servers:
        server.shutdown()
