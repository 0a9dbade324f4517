"""Template helpers for the dashboard."""

from __future__ import annotations

from django import template
from django.utils.translation import get_language_info

register = template.Library()


@register.filter
def language_name(code: str) -> str:
    """A language code as a name in the reader's language ("de" -> "German", "Deutsch", ...)."""
    if not code:
        return ""
    for candidate in (code, code.split("-")[0]):
        try:
            return get_language_info(candidate)["name_translated"]
        except KeyError:
            continue
    return code


@register.filter
def authority(memory) -> int:
    """The memory's authority rank in hygiene's rules: a person 2, an agent 1, capture 0."""
    from memories.hygiene.auto_resolution import RANKS

    return RANKS.get(memory.author_kind, 0)


@register.simple_tag
def public_url() -> str:
    """This server's own URL (ZM_PUBLIC_URL), for the instructions that connect an agent."""
    from django.conf import settings

    return settings.PUBLIC_URL
