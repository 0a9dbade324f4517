"""Import: the agents' own memory files become memories, deterministically (no LLM).

- CLAUDE.md and AGENTS.md: each level-2 section is a convention (a section that is only a
  heading, or only @-imports of other files, is skipped);
- a Cursor rule (.cursor/rules/*.mdc): one convention, its description first;
- a Claude Code auto-memory file: by its frontmatter `type`: user is a preference, feedback a
  convention, project a decision when it states a reason (else a fact), reference a reference.

Each piece goes through `remember()` with an idempotency key derived from its path and text, so
a second import of the same files writes nothing.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext as _

from memories.models import AuthorKind, SourceKind
from memories.schemas import RememberOut
from memories.services.idempotency import Replays
from memories.services.remember import RememberInput, memory_remember_many
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError, ValidationFailed

SOURCE_TOOLS = ("claude-md", "agents-md", "cursor-rules", "claude-memory")
_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?", re.S)
_SECTION = re.compile(r"^## +(.+?)\s*#*\s*$", re.M)
_REASON = re.compile(r"\b(because|so that|since|to avoid|in order to|why:|reason)\b", re.I)
_MEMORY_KINDS = {"user": "preference", "feedback": "convention", "reference": "reference"}


@dataclass(frozen=True)
class Piece:
    title: str
    kind: str
    content: str


def _frontmatter(text: str) -> tuple[dict[str, str], str]:
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, text
    fields = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return fields, text[match.end() :]


def _only_imports(body: str) -> bool:
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    return all(line.startswith("@") or line.startswith("- @") for line in lines)


def _sections(text: str) -> list[Piece]:
    matches = list(_SECTION.finditer(text))
    pieces = []
    ends = [following.start() for following in matches[1:]] + [len(text)] if matches else []
    for match, end in zip(matches, ends, strict=True):
        body = text[match.end() : end].strip()
        if not body or _only_imports(body):
            continue
        title = match.group(1).strip()
        pieces.append(Piece(title=title, kind="convention", content=f"{title}\n\n{body}"))
    return pieces


def _cursor_rule(text: str, path: str) -> list[Piece]:
    fields, body = _frontmatter(text)
    body = body.strip()
    if not body:
        return []
    title = fields.get("description") or path.rsplit("/", 1)[-1].removesuffix(".mdc")
    return [Piece(title=title, kind="convention", content=f"{title}\n\n{body}")]


def _claude_memory(text: str, path: str) -> list[Piece]:
    fields, body = _frontmatter(text)
    body = body.strip()
    if not body:
        return []
    kind = fields.get("type", "").lower()
    if kind == "project":
        kind = "decision" if _REASON.search(body) else "fact"
    else:
        kind = _MEMORY_KINDS.get(kind, "fact")
    title = fields.get("name") or fields.get("description") or path.rsplit("/", 1)[-1]
    return [Piece(title=title, kind=kind, content=body)]


def pieces_of(*, source_tool: str, source_path: str, content: str) -> list[Piece]:
    """The pieces of one file; more than ZM_IMPORT_MAX_PIECES are refused before any is
    written (each is a remember: a long file of short sections would hold the request)."""
    if source_tool not in SOURCE_TOOLS:
        raise ValidationFailed(
            "source_tool", _("Use claude-md, agents-md, cursor-rules or claude-memory.")
        )
    if source_tool in ("claude-md", "agents-md"):
        pieces = _sections(content)
    elif source_tool == "cursor-rules":
        pieces = _cursor_rule(content, source_path)
    else:
        pieces = _claude_memory(content, source_path)
    if len(pieces) > settings.IMPORT_MAX_PIECES:
        raise ValidationFailed(
            "content",
            _("This file holds %(n)d pieces; one import takes at most %(max)d. Split it.")
            % {"n": len(pieces), "max": settings.IMPORT_MAX_PIECES},
        )
    return pieces


def _scope_key(actor: Actor, scope: str | None) -> str:
    """The scope a piece goes to, as its id (the personal scope's when none is named), so the
    same scope named or left out gives one key; a scope the caller cannot write keeps the name
    it was given (remember refuses each piece)."""
    try:
        return (
            access.writable_scope(actor, scope) if scope else access.personal_scope(actor)
        ).public_id
    except DomainError:
        return scope or ""


def _key(scope: str, source_path: str, piece: Piece) -> str:
    """The idempotency key of a piece: the same file imported into another scope is another
    write."""
    text = f"{scope}\n{source_path}\n{piece.kind}\n{piece.content}"
    return f"import:{hashlib.sha256(text.encode()).hexdigest()}"


@dataclass(frozen=True)
class ImportedPiece:
    title: str
    kind: str
    outcome: str  # created, deduplicated, already_imported, or an error code
    memory: str | None


def memory_import(
    *,
    actor: Actor,
    source_tool: str,
    source_path: str,
    content: str,
    scope: str | None = None,
) -> list[ImportedPiece]:
    """Write each piece once (a second import of the same file answers already_imported)."""
    pieces = pieces_of(source_tool=source_tool, source_path=source_path, content=content)
    scope_key = _scope_key(actor, scope)
    requests = [
        RememberInput(
            content=piece.content,
            kind=piece.kind,
            scope=scope,
            source_path=source_path,
            idempotency_key=_key(scope_key, source_path, piece),
            author_kind=AuthorKind.CAPTURE,
            source_kind=SourceKind.IMPORT,
        )
        for piece in pieces
    ]
    results = (
        memory_remember_many(actor=actor, requests=requests, render=RememberOut.rendered)
        if requests
        else []
    )
    answers = []
    for piece, item in zip(pieces, results, strict=True):
        if item.error is not None:
            answers.append(ImportedPiece(piece.title, piece.kind, item.error.code, None))
            continue
        result = item.result
        outcome = (
            "already_imported"
            if result.replayed
            else "deduplicated"
            if result.deduplicated
            else "created"
        )
        answers.append(ImportedPiece(piece.title, piece.kind, outcome, result.memory.public_id))
    return answers


def import_plan(
    *, actor: Actor, source_tool: str, source_path: str, content: str, scope: str | None = None
) -> list[tuple[Piece, bool]]:
    """What an import would write: each piece, and whether it was imported before into that
    scope (dry run)."""
    pieces = pieces_of(source_tool=source_tool, source_path=source_path, content=content)
    scope_key = _scope_key(actor, scope)
    keys = {_key(scope_key, source_path, piece): piece for piece in pieces}
    replays = Replays.load(actor, list(keys))
    return [(piece, replays.replayable(key)) for key, piece in keys.items()]


def source_tool_for(path: str) -> str | None:
    """The importer a local file calls for, from its name (None: not an agent memory file)."""
    name = path.rsplit("/", 1)[-1]
    if name == "CLAUDE.md" or name == "CLAUDE.local.md":
        return "claude-md"
    if name == "AGENTS.md":
        return "agents-md"
    if name.endswith(".mdc"):
        return "cursor-rules"
    if name.endswith(".md") and "/memory/" in path:
        return "claude-memory"
    return None
