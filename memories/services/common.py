"""Pieces shared by the write services and canonicalization."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memories.embeddings import Embedded
from memories.models import Memory, MemoryWindow

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """The form two texts share when they say the same thing in the same words."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def window_rows(*, memory: Memory, embedded: Embedded) -> list[MemoryWindow]:
    """The window embeddings of a long memory, as rows to insert (none for a short one)."""
    return [
        MemoryWindow(
            memory=memory,
            position=window.position,
            start_char=window.start_char,
            end_char=window.end_char,
            embedding=vector,
        )
        for window, vector in embedded.windows
    ]


def save_windows(*, memory: Memory, embedded: Embedded, replace: bool) -> None:
    """Store the window embeddings of a long memory (replacing the old ones on an edit)."""
    if replace:
        MemoryWindow.objects.filter(memory=memory).delete()
    MemoryWindow.objects.bulk_create(window_rows(memory=memory, embedded=embedded))
