"""Ingest: store a chunk at once and answer; extraction happens later, off the request path.

Before anything is stored (or ever sent to an LLM) the content guard's patterns redact secrets in
the chunk. The ledger is per user and scope: the same hash (the client's `chunk_hash`, else the
sha256 of the content as sent) sent to the same scope answers the chunk already stored there, and
nothing is extracted twice. The scope is one the caller may write now, so the ledger never answers
about a chunk in a scope the caller can no longer read, or outside a token's scopes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from memories.activity.logged import activity_logged
from memories.capture.service import EXTRACTION
from memories.capture.tasks import enqueue_extraction
from memories.models import ActivityOperation, Chunk, ChunkSource, ChunkStatus
from scopes import access
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError, NotFound, ValidationFailed
from zeromemory.core.paging import Page, cursor_page
from zeromemory.core.secrets import redact_secrets

HASH_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")


@dataclass(frozen=True)
class IngestInput:
    source_kind: str
    content: str | None = None
    client: str = ""
    conversation_id: str = ""
    source_path: str = ""
    chunk_hash: str = ""
    scope: str | None = None
    probe: bool = False


@dataclass(frozen=True)
class Ingested:
    chunk: Chunk | None
    duplicate: bool


def _hash_of(request: IngestInput) -> str:
    if request.chunk_hash:
        if not HASH_PATTERN.fullmatch(request.chunk_hash):
            raise ValidationFailed(
                "chunk_hash", _("Use up to 128 letters, digits, - and _ (a hex sha256).")
            )
        return request.chunk_hash
    if not request.content:
        raise ValidationFailed("content", _("Send the content (or, to probe, its chunk_hash)."))
    return hashlib.sha256(request.content.encode("utf-8")).hexdigest()


def _scope(actor: Actor, request: IngestInput) -> Scope:
    if not request.scope:
        return access.personal_scope(actor)
    try:
        return access.writable_scope(actor, request.scope)
    except DomainError as exc:
        raise exc.naming("scope") from None


def _check(request: IngestInput) -> None:
    if request.source_kind not in ChunkSource.values:
        raise ValidationFailed("source_kind", _("Use transcript, document or history."))
    for name in ("content", "client", "conversation_id", "source_path", "chunk_hash", "scope"):
        if "\x00" in (getattr(request, name) or ""):
            raise ValidationFailed(name, _("NUL characters are not allowed."))
    if request.probe:
        return
    if not request.content or not request.content.strip():
        raise ValidationFailed("content", _("Content is empty."))
    if len(request.content) > settings.MAX_CHUNK_CHARS:
        raise ValidationFailed(
            "content",
            _("Content is longer than %(n)d characters.") % {"n": settings.MAX_CHUNK_CHARS},
        )


def chunk_ingest(*, actor: Actor, request: IngestInput) -> Ingested:
    """Store the chunk (202) or answer the one already in the caller's ledger for that scope
    (200); one activity row either way (a write: operation ingest)."""
    scope = request.scope if isinstance(request.scope, str) else None
    with activity_logged(
        actor=actor,
        operation=ActivityOperation.INGEST,
        scopes=[scope] if scope else [],
        options={"source_kind": request.source_kind, "probe": request.probe},
    ) as entry:
        ingested = _ingest(actor, request)
        if ingested.chunk is not None:
            entry.record(
                scopes=[ingested.chunk.scope.public_id],
                results=[{"id": ingested.chunk.public_id, "duplicate": ingested.duplicate}],
            )
        else:
            entry.record(scopes=[])
    return ingested


def _redacted(value: str, found: list[str]) -> str:
    value, kinds = redact_secrets(value)
    found.extend(kinds)
    return value


def _ingest(actor: Actor, request: IngestInput) -> Ingested:
    access.require_write_access(actor)
    _check(request)
    digest = _hash_of(request)
    scope = _scope(actor, request)
    ledger = Chunk.objects.select_related("scope").filter(
        user=actor.user, scope=scope, chunk_hash=digest
    )
    existing = ledger.first()
    if existing is not None or request.probe:
        return Ingested(chunk=existing, duplicate=existing is not None)
    content, redactions = redact_secrets(request.content)
    # The other free-text fields are shown by the chunk's answer, the Ingest page and the admin,
    # and become provenance: a secret in them is redacted as in the content.
    client = _redacted(request.client or actor.client_name, redactions)
    conversation_id = _redacted(request.conversation_id, redactions)
    source_path = _redacted(request.source_path, redactions)
    chunk = Chunk(
        user=actor.user,
        scope=scope,
        created_by_token=actor.token,
        source_kind=request.source_kind,
        client=client,
        conversation_id=conversation_id,
        source_path=source_path,
        chunk_hash=digest,
        content=content,
        content_chars=len(content),
        redactions=sorted(set(redactions)),
        status=ChunkStatus.PENDING if settings.ANTHROPIC_API_KEY else ChunkStatus.WAITING_FOR_KEY,
    )
    claim = EXTRACTION.new_claim(chunk) if chunk.status == ChunkStatus.PENDING else ""
    try:
        with transaction.atomic():
            chunk.save(force_insert=True)
    except IntegrityError:  # the same chunk from a concurrent request
        return Ingested(chunk=ledger.get(), duplicate=True)
    if claim:
        transaction.on_commit(partial(enqueue_extraction, chunk_id=chunk.id, claim=claim))
    return Ingested(chunk=chunk, duplicate=False)


def chunk_for_read(*, actor: Actor, public_id: str) -> Chunk:
    """One of the caller's chunks, in a scope it can still read; 404 otherwise."""
    chunk = (
        Chunk.objects.select_related("scope")
        .filter(public_id=public_id, user=actor.user, scope__in=access.readable_scopes(actor))
        .first()
    )
    if chunk is None:
        raise NotFound(_("No chunk with id %(id)s.") % {"id": public_id})
    return chunk


def chunk_list(*, actor: Actor, page: Page) -> tuple[list[Chunk], str | None]:
    """The caller's chunks in scopes it can read, newest first."""
    chunks = Chunk.objects.select_related("scope").filter(
        user=actor.user, scope__in=access.readable_scopes(actor)
    )
    return cursor_page(chunks, page)
