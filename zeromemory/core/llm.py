"""The one place that builds a client for the Anthropic API."""

from __future__ import annotations

import anthropic
from django.conf import settings


def anthropic_client() -> anthropic.Anthropic | None:
    """A client configured from settings, or None when no ANTHROPIC_API_KEY is configured.

    Built afresh on every call: construction is cheap, and a key or URL changed in settings (or by
    a test) takes effect on the next call. The SDK's own retries are off because the task layer
    retries with backoff and counts the attempts.
    """
    api_key = settings.ANTHROPIC_API_KEY
    if not api_key:
        return None
    return anthropic.Anthropic(
        api_key=api_key,
        # None lets the SDK fall back to its default endpoint.
        base_url=settings.ANTHROPIC_BASE_URL or None,
        timeout=float(settings.TRANSLATOR_TIMEOUT_SECONDS),
        max_retries=0,
    )
