"""What an archive's memory must be to be written: what `remember` holds every write to.

Its body within remember's length (`clean_content`), no secret in any free-text field (the same
content guard), no text longer than a memory may be, at most `ZM_IMPORT_MAX_PROVENANCE`
provenance rows, `ZM_IMPORT_MAX_VERSIONS` versions and `MAX_LINKS` typed links, and no NUL or
lone surrogate anywhere (PostgreSQL stores neither).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from memories.canonical.content import clean_content
from memories.portability.incoming import MemoryIn
from zeromemory.core.errors import ValidationFailed
from zeromemory.core.secrets import refuse_secrets
from zeromemory.core.text import unstorable

# The typed links one imported memory may make (removed ones count: history keeps them).
MAX_LINKS = 1000


def refuse_unstorable(value: Any, where: str = "") -> None:
    """Every string in a parsed file, keys too: ValueError at the first NUL or lone surrogate."""
    if isinstance(value, str):
        if unstorable(value):
            raise ValueError(f"{where or 'a value'} holds a NUL or a lone surrogate")
    elif isinstance(value, dict):
        for key, item in value.items():
            refuse_unstorable(key, where)
            refuse_unstorable(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            refuse_unstorable(item, f"{where}[{index}]")


def _free_text(memory: MemoryIn) -> dict[str, str | None]:
    """Every free-text field of a memory, named as the archive names it."""
    fields: dict[str, str | None] = {
        "content": memory.content,
        "original": memory.original,
        "author.client": memory.author.client,
        "author.user": memory.author.user,
        "forgotten.reason": memory.forgotten.reason if memory.forgotten else None,
    }
    for index, row in enumerate(memory.provenance):
        for name in ("verbatim", "written_text", "path", "conversation", "client", "author"):
            fields[f"provenance[{index}].{name}"] = getattr(row, name)
        fields[f"provenance[{index}].chunk_hash"] = row.chunk_hash
    for index, version in enumerate(memory.versions):
        fields[f"versions[{index}].content"] = version.content
        fields[f"versions[{index}].original"] = version.original
    return fields


def held_to_remember(memory: MemoryIn) -> MemoryIn:
    """The memory as remember would take it (its text cleaned), or a DomainError saying why not:
    the same limits and the same content guard as every other write."""
    if len(memory.provenance) > settings.IMPORT_MAX_PROVENANCE:
        raise ValidationFailed(
            "provenance",
            _("More than %(n)d provenance rows.") % {"n": settings.IMPORT_MAX_PROVENANCE},
        )
    if len(memory.versions) > settings.IMPORT_MAX_VERSIONS:
        raise ValidationFailed(
            "versions", _("More than %(n)d versions.") % {"n": settings.IMPORT_MAX_VERSIONS}
        )
    if len(memory.links) > MAX_LINKS:
        raise ValidationFailed("links", _("More than %(n)d links.") % {"n": MAX_LINKS})
    content = clean_content(memory.content)
    texts = _free_text(memory)
    for name, text in texts.items():
        if text and len(text) > settings.MAX_MEMORY_CHARS:
            raise ValidationFailed(
                name,
                _("Longer than %(n)d characters.") % {"n": settings.MAX_MEMORY_CHARS},
            )
    refuse_secrets(texts)
    return memory.model_copy(update={"content": content})
