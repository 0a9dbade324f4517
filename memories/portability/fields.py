"""What an export writes of each memory (its front matter) and of each review-queue item."""

from __future__ import annotations

from typing import Any

from memories.models import (
    Conflict,
    ConflictAction,
    Memory,
    MemoryVersion,
    Provenance,
    ValidityPeriod,
)
from memories.portability import format as fmt


def _name(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def _provenance_fields(row: Provenance) -> dict[str, Any]:
    return {
        "source": row.source_kind,
        "absorbed": row.absorbed,
        "author": row.author_name or _name(row.created_by) or "",
        "client": row.client_name,
        "conversation": row.conversation_id,
        "path": row.source_path,
        "chunk_hash": row.chunk_hash,
        "verbatim": row.verbatim,
        "written_text": row.written_text,
        "created": fmt.when(row.created_at),
    }


def _version_fields(row: MemoryVersion) -> dict[str, Any]:
    return {
        "number": row.number,
        "kind": row.kind_id,
        "content": row.content,
        "original": row.content_original,
        "language": row.content_lang,
        "edited_by": _name(row.edited_by),
        "created": fmt.when(row.created_at),
    }


def _period_fields(row: ValidityPeriod) -> dict[str, Any]:
    return {
        "from": fmt.when(row.valid_from),
        "until": fmt.when(row.valid_until),
        "started": row.started,
        "ended": row.ended,
        "started_by": _name(row.started_by),
        "ended_by": _name(row.ended_by),
        "replaced_by": row.replaced_by.public_id if row.replaced_by_id else None,
    }


def memory_fields(memory: Memory, *, disputed: list[str]) -> dict[str, Any]:
    """The front matter of one memory (read with the annotations `_pages` adds)."""
    provenance = [_provenance_fields(row) for row in memory.provenance.all()]
    first = next((row["author"] for row in provenance if not row["absorbed"]), "")
    forgotten = None
    if memory.forgotten_at is not None:
        forgotten = {
            "at": fmt.when(memory.forgotten_at),
            "reason": memory.forgotten_reason,
            "by": memory.forgotten_by_name,
        }
    return {
        "id": memory.public_id,
        "kind": memory.kind_id,
        "scope": memory.scope_public_id,
        "state": memory.state.value,
        "author": {
            "kind": memory.author_kind,
            "client": memory.agent_name,
            "user": memory.author_username or first,
        },
        "created": fmt.when(memory.created_at),
        "updated": fmt.when(memory.updated_at),
        "language": memory.content_lang,
        "translation": memory.translation_status,
        "original": memory.content_original,
        "forgotten": forgotten,
        "restored": fmt.when(memory.restored_at),
        "superseded_by": memory.superseded_by_public_id,
        "superseded_at": fmt.when(memory.superseded_at),
        "supersedes": sorted(m.public_id for m in memory.supersedes.all()),
        "disputed": disputed,
        "provenance": provenance,
        "versions": [_version_fields(row) for row in memory.versions.all()],
        "validity": [_period_fields(row) for row in memory.validity_periods.all()],
    }


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
