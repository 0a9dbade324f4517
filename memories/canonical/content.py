"""A memory's content and everything it derives from it: the one owner.

Every door that sets a memory's text goes through here (remember, edit, the translation that
canonicalizes it, an import of an export, a move or a share, re-embedding with another model),
so the facts a memory derives from its text cannot drift apart:

- the text as stored (`clean_content`: stripped, not empty, within MAX_MEMORY_CHARS);
- its hash (`content_hash`, of the text's `comparable` form): the key of deduplication and of
  the one-valid-memory-per-text constraint;
- its language and translation status (`detect_language`), the original a translation was made
  from, and for text that is not English the translation's claim, queued on commit;
- its embedding, and window embeddings for a text longer than the model's window;
- the full-text search vector, which PostgreSQL derives from `content` itself (a generated
  column, see models/memory.py): nothing here sets it;
- what it is about: the entities its text names, found without an LLM (`memories.entities`:
  the detector, and one dictionary match over its scope's names and aliases per batch), with
  those its writer, the extractor or the translator gave (`mentions_saved`).

Two steps, so that a batch embeds in one model pass and the slow part runs before any lock:
`derived_text` (and `derived_translation`, `derived_copy`) with `embed_derived` turn texts into
`Derived` facts without touching the database; `content_set` puts them on a memory row (new or
locked, the caller saves it), then `window_rows` or `windows_saved` once the row has its id and
`translations_queued` for the claims.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from memories.canonical.language import detect_language
from memories.embeddings import Embedded, EmbeddedAhead, embed_contents
from memories.entities.detect import Found, scanned
from memories.entities.dictionary import aliases_found
from memories.entities.given import GivenEntity
from memories.entities.mentions import MentionWrite, looked_up, mention_rows, mentions_written
from memories.entities.names import text_keys
from memories.models import (
    EntityAlias,
    EntityMention,
    Memory,
    MemoryWindow,
    MentionSource,
    TranslationStatus,
)
from zeromemory.core.errors import ValidationFailed
from zeromemory.core.text import comparable

K = TypeVar("K")


def clean_content(content: object) -> str:
    """A memory's text as it is stored: stripped, not empty, within MAX_MEMORY_CHARS."""
    text = content.strip() if isinstance(content, str) else ""
    if not text:
        raise ValidationFailed("content", _("Content is empty."))
    if len(text) > settings.MAX_MEMORY_CHARS:
        raise ValidationFailed(
            "content",
            _("Content is longer than %(n)d characters.") % {"n": settings.MAX_MEMORY_CHARS},
        )
    return text


def content_hash(text: str) -> str:
    """The key two texts share when they say the same thing in the same words (for lookups; a
    memory's own hash is set by `content_set`)."""
    return hashlib.sha256(comparable(text).encode("utf-8")).hexdigest()


@dataclass
class Derived:
    """What a text gives the memory that holds it. `embedded` is None until `embed_derived`."""

    content: str
    content_hash: str
    lang: str
    translation_status: str
    original: str = ""  # the text this one was translated from, kept on the memory
    embedded: Embedded | None = None
    # What the text names: the detector's findings and the word n-grams the dictionary match
    # looks up (`mentions_saved`), computed with the rest, before any query.
    entities_found: list[Found] = field(default_factory=list)
    entity_keys: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.entity_keys:
            # Proper names are read in English only: a text waiting for its translation is
            # read again when the English is there.
            english = self.translation_status != TranslationStatus.PENDING
            self.entities_found, prose = scanned(self.content, names=english)
            self.entity_keys = text_keys(prose)


def derived_text(text: str) -> Derived:
    """A text as a caller wrote it (already `clean_content`): its hash and its language, waiting
    for canonicalization when it is not English."""
    decision = detect_language(text)
    status = TranslationStatus.PENDING if decision.needs_translation else TranslationStatus.SKIPPED
    return Derived(text, content_hash(text), decision.lang, status)


def derived_translation(text: str, *, original: str, lang: str) -> Derived:
    """The English of `original` (written in `lang`): done, the original and its language kept."""
    return Derived(text, content_hash(text), lang, TranslationStatus.DONE, original)


def derived_copy(memory: Memory) -> Derived:
    """The text of an existing memory as it stands, for a copy of it in another scope (its
    language, original and translation status carried, its embedding computed again)."""
    return Derived(
        memory.content,
        content_hash(memory.content),
        memory.content_lang,
        memory.translation_status,
        memory.content_original,
    )


def embed_derived(items: list[Derived], *, ahead: EmbeddedAhead | None = None) -> None:
    """The embeddings (and windows) of the items without one yet, in one batch of the model;
    those `ahead` computed meanwhile (for their exact texts) are taken from it."""
    missing = [item for item in items if item.embedded is None]
    if ahead is not None and missing:
        found = ahead.take()
        for item in missing:
            item.embedded = found.get(item.content)
        missing = [item for item in missing if item.embedded is None]
    for item, embedded in zip(
        missing, embed_contents([item.content for item in missing]), strict=True
    ):
        item.embedded = embedded


def embedded_in_passes(
    items: dict[K, Derived], *, ahead: EmbeddedAhead | None = None
) -> Iterator[list[K]]:
    """The keys of the items, group by group as their embeddings are in: those embedded
    already, then each group `ahead` hands over as a pass of the model ends, so the caller
    goes on with the first texts while the model works on the next; whatever it did not
    embed is embedded last, here (one batch of the model, as `embed_derived`)."""
    done = [key for key, item in items.items() if item.embedded is not None]
    if done:
        yield done
    waiting = {key: item for key, item in items.items() if item.embedded is None}
    if ahead is not None and waiting:
        for found in ahead.in_passes():
            group = [key for key, item in waiting.items() if item.content in found]
            for key in group:
                waiting.pop(key).embedded = found[items[key].content]
            if group:
                yield group
            if not waiting:
                break
    if waiting:
        embed_derived(list(waiting.values()))
        yield list(waiting)


def content_set(memory: Memory, derived: Derived) -> None:
    """Set the memory's content and everything derived from it, on the row in hand (new, or
    locked by the caller, who saves it). A text that is not English gets a fresh translation
    claim (`translations_queued` queues it once the row is committed); any other leaves none,
    so a translation in flight for an earlier text cannot land."""
    if derived.embedded is None:
        embed_derived([derived])
    text_set(memory, derived)
    memory.embedding = derived.embedded.vector


def text_set(memory: Memory, derived: Derived) -> None:
    """`content_set` but the vector, on a new row while the model still computes it: the
    caller sets `memory.embedding` from `derived.embedded` once it is in, before the insert."""
    memory.content = derived.content
    memory.content_hash = derived.content_hash
    memory.content_lang = derived.lang
    memory.content_original = derived.original
    memory.translation_status = derived.translation_status
    memory.translation_attempts = 0
    memory.translation_error = ""
    memory.translation_next_at = None
    if derived.translation_status == TranslationStatus.PENDING:
        _translation().TRANSLATION.new_claim(memory)
    else:
        memory.translation_claim = ""
        memory.translation_lease_until = None


def window_rows(*, memory: Memory, derived: Derived | Embedded) -> list[MemoryWindow]:
    """The window embeddings of a long memory as rows to insert (none for a short one); the
    memory has its id."""
    embedded = derived.embedded if isinstance(derived, Derived) else derived
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


def windows_saved(*, memory: Memory, derived: Derived | Embedded) -> None:
    """The window embeddings of a memory whose text (or model) changed, replacing the old ones."""
    MemoryWindow.objects.filter(memory=memory).delete()
    MemoryWindow.objects.bulk_create(window_rows(memory=memory, derived=derived))


def embedding_saved(*, memory: Memory, embedded: Embedded) -> None:
    """The embedding and windows of an unchanged text, computed again (another model)."""
    memory.embedding = embedded.vector
    memory.save(update_fields=["embedding"])
    windows_saved(memory=memory, derived=embedded)


@dataclass(frozen=True)
class Mentioned:
    """A saved memory, the facts of its text, and the entities a writer or an LLM pass gave."""

    memory: Memory
    derived: Derived
    given: tuple[GivenEntity, ...] = ()
    given_source: str = MentionSource.AGENT
    detected: bool = True  # False: only the given ones (a write absorbed into another memory)


def _writes(items: list[Mentioned]) -> list[MentionWrite]:
    return [
        MentionWrite(
            memory=item.memory,
            keys=item.derived.entity_keys if item.detected else {},
            found=item.derived.entities_found if item.detected else [],
            given=item.given,
            given_source=item.given_source,
        )
        for item in items
    ]


def mentions_saved(items: list[Mentioned], *, by=None) -> None:
    """Record what these saved memories are about, for the whole batch in a few statements."""
    mentions_written(_writes(items), by=by)


def mentions_known(
    texts: list[tuple[int, Derived, tuple[GivenEntity, ...]]],
) -> dict[tuple[int, str], EntityAlias]:
    """The aliases these texts, to be saved in these scopes (ids), and the names their writers
    gave could mention, in one query, before the memories exist: a write looks them up while the
    model computes its vectors and hands them to `mention_rows_made`."""
    pairs: set[tuple[int, str]] = set()
    for scope_id, derived, given in texts:
        pairs |= looked_up(scope_id, derived.entity_keys, derived.entities_found, given)
    return aliases_found(pairs)


def mention_rows_made(
    items: list[Mentioned], *, by=None, known: dict[tuple[int, str], EntityAlias]
) -> list[EntityMention]:
    """`mentions_saved` but its last insert: the new entities are created, and the mention rows
    are returned for the caller to insert with its other rows (`zeromemory.core.sql.
    rows_inserted`, conflicts ignored). `known` is `mentions_known` of (at least) these texts."""
    return mention_rows(_writes(items), by=by, known=known)


def translations_queued(memories: list[Memory]) -> None:
    """Queue the translation of each of these saved memories that holds a claim, on commit."""
    enqueue = _translation_tasks().enqueue_canonicalization
    for memory in memories:
        if memory.translation_status == TranslationStatus.PENDING and memory.translation_claim:
            transaction.on_commit(
                partial(enqueue, memory_id=memory.id, claim=memory.translation_claim)
            )


# The translation job is declared (canonical.service) with the step that applies a translation
# through `content_set`: it is looked up when a claim is made, not when this module loads.
def _translation():
    from memories.canonical import service

    return service


def _translation_tasks():
    from memories.canonical import tasks

    return tasks
