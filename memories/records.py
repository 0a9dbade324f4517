"""What a memory's rows derive from its text, and the provenance that moves between memories:
shared by the write services, canonicalization and hygiene, below all three."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from memories.embeddings import Embedded
from memories.models import Memory, MemoryWindow, Provenance

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


def move_provenance(*, source: Memory, target: Memory, written_text: str) -> list[list]:
    """Every provenance row of `source` joins `target`, marked absorbed, keeping what it said
    (`written_text` when the row recorded none). Returns `[id, absorbed, written_text]` of each
    row as it was, for `return_provenance` to undo the move."""
    moved = []
    for row in Provenance.objects.filter(memory=source):
        moved.append([row.id, row.absorbed, row.written_text])
        row.memory = target
        row.absorbed = True
        row.written_text = row.written_text or written_text
        row.save(update_fields=["memory", "absorbed", "written_text"])
    return moved


def return_provenance(*, moved: list[list], to: Memory) -> None:
    """Undo `move_provenance`: the rows go back to `to` as they were."""
    for row_id, absorbed, written_text in moved:
        Provenance.objects.filter(pk=row_id).update(
            memory=to, absorbed=absorbed, written_text=written_text
        )
