"""What an export writes of each memory (its front matter) and of each review-queue item."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memories.models import Conflict, ConflictAction, MemoryState
from memories.portability import format as fmt


def _name(user: Any) -> str | None:
    return user.get_username() if user is not None else None


# The export reads rows as tuples of these columns (`values_list`), one query per table per page
# of memories: model instances cost more than everything else an export does.
MEMORY_COLUMNS = (
    "id",
    "public_id",
    "kind_id",
    "content",
    "valid",
    "superseded_by_id",
    "author_kind",
    "agent_name",
    "created_by__username",
    "created_at",
    "updated_at",
    "content_lang",
    "translation_status",
    "content_original",
    "forgotten_at",
    "forgotten_reason",
    "forgotten_by__username",
    "restored_at",
    "superseded_by__public_id",
    "superseded_at",
)
PROVENANCE_COLUMNS = (
    "memory_id",
    "source_kind",
    "absorbed",
    "author_name",
    "created_by__username",
    "client_name",
    "conversation_id",
    "source_path",
    "chunk_hash",
    "verbatim",
    "written_text",
    "created_at",
    "claims",
)
VERSION_COLUMNS = (
    "memory_id",
    "number",
    "kind_id",
    "content",
    "content_original",
    "content_lang",
    "edited_by__username",
    "created_at",
)
LINK_COLUMNS = (
    "source_id",
    "link_type",
    "target__public_id",
    "author_kind",
    "agent_name",
    "created_by__username",
    "created_at",
    "removed_at",
    "removed_by__username",
)
MENTION_COLUMNS = ("memory_id", "entity__name", "entity__kind", "source", "surface")
PERIOD_COLUMNS = (
    "memory_id",
    "valid_from",
    "valid_until",
    "started",
    "ended",
    "started_by__username",
    "ended_by__username",
    "replaced_by__public_id",
)


def provenance_fields(row: tuple) -> dict[str, Any]:
    _, source, absorbed, author, creator, client, conversation, path, chunk, *texts = row
    verbatim, text, at, claims = texts
    fields = {
        "source": source,
        "absorbed": absorbed,
        "author": author or creator or "",
        "client": client,
        "conversation": conversation,
        "path": path,
        "chunk_hash": chunk,
        "verbatim": verbatim,
        "written_text": text,
        "created": fmt.when(at),
    }
    if claims:  # written only when there are any, so archives without stay the same bytes
        fields["claims"] = claims
    return fields


def version_fields(row: tuple) -> dict[str, Any]:
    _, number, kind, content, original, language, edited_by, at = row
    return {
        "number": number,
        "kind": kind,
        "content": content,
        "original": original,
        "language": language,
        "edited_by": edited_by,
        "created": fmt.when(at),
    }


def mention_fields(row: tuple) -> dict[str, Any]:
    _, name, kind, source, surface = row
    return {"name": name, "kind": kind, "source": source, "surface": surface}


def period_fields(row: tuple) -> dict[str, Any]:
    _, start, until, started, ended, started_by, ended_by, replaced_by = row
    return {
        "from": fmt.when(start),
        "until": fmt.when(until),
        "started": started,
        "ended": ended,
        "started_by": started_by,
        "ended_by": ended_by,
        "replaced_by": replaced_by,
    }


def link_fields(row: tuple) -> dict[str, Any]:
    """A typed link the memory makes, removed ones too (history shows them)."""
    _, link_type, target, author_kind, agent_name, creator, created, removed, removed_by = row
    return {
        "type": link_type,
        "to": target,
        "author": {"kind": author_kind, "client": agent_name, "user": creator},
        "created": fmt.when(created),
        "removed": fmt.when(removed),
        "removed_by": removed_by,
    }


@dataclass(frozen=True)
class Related:
    """What the export writes of a memory's other rows, already as fields."""

    provenance: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    validity: list[dict[str, Any]]
    supersedes: list[str]
    disputed: list[str]
    links: list[dict[str, Any]]  # the typed links it makes
    entities: list[dict[str, Any]] = field(default_factory=list)


def memory_fields(row: tuple, *, scope_id: str, related: Related) -> dict[str, Any]:
    """The front matter of one memory, from its `MEMORY_COLUMNS` row."""
    (
        _,
        public_id,
        kind,
        _content,
        valid,
        superseded_by_pk,
        author_kind,
        agent_name,
        author_username,
        created,
        updated,
        language,
        translation,
        original,
        forgotten_at,
        forgotten_reason,
        forgotten_by,
        restored,
        superseded_by,
        superseded_at,
    ) = row
    first = next((item["author"] for item in related.provenance if not item["absorbed"]), "")
    forgotten = None
    if forgotten_at is not None:
        forgotten = {"at": fmt.when(forgotten_at), "reason": forgotten_reason, "by": forgotten_by}
    if valid:
        state = MemoryState.VALID.value
    else:
        state = (MemoryState.SUPERSEDED if superseded_by_pk else MemoryState.FORGOTTEN).value
    fields = {
        "id": public_id,
        "kind": kind,
        "scope": scope_id,
        "state": state,
        "author": {"kind": author_kind, "client": agent_name, "user": author_username or first},
        "created": fmt.when(created),
        "updated": fmt.when(updated),
        "language": language,
        "translation": translation,
        "original": original,
        "forgotten": forgotten,
        "restored": fmt.when(restored),
        "superseded_by": superseded_by,
        "superseded_at": fmt.when(superseded_at),
        "supersedes": related.supersedes,
        "disputed": related.disputed,
        "provenance": related.provenance,
        "versions": related.versions,
        "validity": related.validity,
    }
    if related.links:  # written only when there are any, so archives without stay the same bytes
        fields["links"] = related.links
    if related.entities:  # written only when there are any, so archives without stay the same
        fields["entities"] = related.entities
    return fields


def _action_fields(action: ConflictAction) -> dict[str, Any]:
    return {
        "resolution": action.resolution,
        "automatic": action.automatic,
        "by": _name(action.by),
        "surface": action.surface,
        "retired": action.retired.public_id if action.retired_id else None,
        "kept": action.kept.public_id if action.kept_id else None,
        "created": fmt.when(action.created_at),
        "undone_at": fmt.when(action.undone_at),
        "undone_by": _name(action.undone_by),
    }


def conflict_fields(conflict: Conflict) -> dict[str, Any]:
    return {
        "id": conflict.public_id,
        "scope": conflict.scope.public_id,
        "memory_a": conflict.memory_a.public_id,
        "memory_b": conflict.memory_b.public_id if conflict.memory_b_id else None,
        "similarity": conflict.similarity,
        "status": conflict.status,
        "verdict": conflict.verdict,
        "confidence": conflict.confidence,
        "rationale": conflict.rationale,
        "resolution": conflict.resolution,
        "resolved_automatically": conflict.resolved_automatically,
        "resolved_by": _name(conflict.resolved_by),
        "resolved_at": fmt.when(conflict.resolved_at),
        "challenged_by": _name(conflict.challenged_by),
        "created": fmt.when(conflict.created_at),
        "judged": fmt.when(conflict.judged_at),
        "actions": [_action_fields(action) for action in conflict.actions.all()],
    }


def entity_fields(entity: Any) -> dict[str, Any]:
    """An entity of an exported scope, its aliases (its own name first) and the entity it is
    merged into while that merge stands."""
    aliases = sorted(alias.alias for alias in entity.aliases.all() if alias.alias != entity.name)
    return {
        "scope": entity.scope.public_id,
        "name": entity.name,
        "kind": entity.kind,
        "aliases": aliases,
        "merged_into": entity.merged_into.name if entity.merged_into_id else None,
    }
