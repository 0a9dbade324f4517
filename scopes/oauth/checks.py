"""Deployment check: behind TLS the advertised URLs must be https, or clients would send their
codes and tokens in clear and the resource they bind tokens to would not be this server's."""

from __future__ import annotations

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def public_url_is_https(app_configs, **kwargs):
    if settings.SECURE and not settings.PUBLIC_URL.startswith("https://"):
        return [
            checks.Error(
                "ZM_PUBLIC_URL must be the https:// URL clients reach this server at.",
                hint="Set ZM_PUBLIC_URL=https://memory.example.com (the proxy's origin).",
                id="zeromemory.E101",
            )
        ]
    return []
