"""What remember() checks before it writes: NUL, secrets, text, size, kind, author, scope.

`prepare` turns one request into a `Prepared` write (normalized content, its hash, the detected
language, the translation status) or raises a DomainError naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _

from memories.canonical.language import detect_language
from memories.embeddings import Embedded
from memories.kinds import kind_for_slug
from memories.models import (
    AUTHOR_RANKS,
    AuthorKind,
    SourceKind,
    TranslationStatus,
    authenticated_author_kind,
)
from memories.records import content_hash
from scopes import access
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets


@dataclass(frozen=True)
class RememberInput:
    content: str
    kind: str
    scope: str | None = None
    verbatim: str | None = None
    conversation_id: str = ""
    source_path: str = ""
    chunk_hash: str = ""
    idempotency_key: str | None = None
    absorb_similar: bool = False
    author_kind: str | None = None
    source_kind: str = SourceKind.REMEMBER
    chunk_id: int | None = None  # the captured chunk an extraction took this memory from
    # Capture's reason to hold the memory for review: it is stored forgotten, with a review item.
    held_reason: str = ""


@dataclass
class Prepared:
    request: RememberInput
    scope: Scope
    content: str
    verbatim: str
    content_hash: str
    lang: str
    status: str
    author_kind: str
    embedded: Embedded | None = None


_TEXT_FIELDS = (
    "content",
    "verbatim",
    "conversation_id",
    "source_path",
    "chunk_hash",
    "scope",
    "idempotency_key",
)


def refuse_nul(request: RememberInput) -> DomainError | None:
    """PostgreSQL text cannot hold NUL: refuse it before any query, naming the field."""
    for name in _TEXT_FIELDS:
        value = getattr(request, name)
        if isinstance(value, str) and "\x00" in value:
            return ValidationFailed(name, _("NUL characters are not allowed."))
    return None


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


def scope_for(actor: Actor, request: RememberInput, cache: dict) -> Scope:
    """The writable scope of a request, looked up once per batch."""
    key = request.scope or ""
    if key not in cache:
        try:
            cache[key] = (
                access.writable_scope(actor, request.scope)
                if request.scope
                else access.personal_scope(actor)
            )
        except DomainError as exc:
            cache[key] = exc.naming("scope") if request.scope else exc
    found = cache[key]
    if isinstance(found, DomainError):
        raise found
    return found


def _author_kind(actor: Actor, asked: str | None) -> str:
    """The author kind a write is stored with: the caller's own authority, or a lower one it
    asks for (an import of notes an agent wrote may say `capture`), never a higher one."""
    own = authenticated_author_kind(actor)
    if asked is None:
        return own
    if asked not in AuthorKind.values:
        raise ValidationFailed("author_kind", _("Unknown author kind."))
    if AUTHOR_RANKS[asked] > AUTHOR_RANKS[own]:
        raise ValidationFailed(
            "author_kind",
            _(
                "Authority comes from how you signed in: this write is by %(own)s and cannot "
                "claim to be by %(asked)s."
            )
            % {"own": own, "asked": asked},
        )
    return asked


def prepare(actor: Actor, request: RememberInput, scope: Scope) -> Prepared:
    refuse_secrets(
        {
            "content": request.content,
            "verbatim": request.verbatim,
            "conversation_id": request.conversation_id,
            "source_path": request.source_path,
            "chunk_hash": request.chunk_hash,
            "idempotency_key": request.idempotency_key,
        }
    )
    content = clean_content(request.content)
    kind_for_slug(request.kind)
    author_kind = _author_kind(actor, request.author_kind)
    decision = detect_language(content)
    return Prepared(
        request=request,
        scope=scope,
        content=content,
        verbatim=(request.verbatim or "").strip(),
        content_hash=content_hash(content),
        lang=decision.lang,
        status=TranslationStatus.PENDING
        if decision.needs_translation
        else TranslationStatus.SKIPPED,
        author_kind=author_kind,
    )
