"""Export: scopes as a zip of markdown files, written as it is read, in bounded memory.

The archive is produced by a generator: each memory file is compressed into a small buffer and
its bytes are handed on before the next rows are read, so memory use does not grow with the
scope. Rows are read in pages of `PAGE` by keyset (never all at once), each page with its
provenance, versions and open queue items fetched in one query each. Python's zipfile writes
to a stream that cannot seek (a data descriptor after each entry), so no library is needed.

Determinism: entries in sorted path order with a fixed date and fixed attributes, the manifest
last; the same rows always give the same bytes.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import F, Prefetch, Q

from memories.models import (
    Conflict,
    ConflictAction,
    ConflictStatus,
    Memory,
    MemoryVersion,
    Provenance,
)
from memories.portability import format as fmt
from scopes.models import Scope

PAGE = 500
# 1980-01-01, the earliest time a zip entry can carry: every entry has it.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_LEVEL = 6


def _name(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def scope_directories(scopes: Iterable[Scope]) -> list[tuple[str, Scope]]:
    """Each scope's directory in the archive (its slug; with its id too when two scopes of the
    export share a slug), sorted."""
    scopes = list(scopes)
    slugs = [scope.slug for scope in scopes]
    named = [
        (scope.slug if slugs.count(scope.slug) == 1 else f"{scope.slug}-{scope.public_id}", scope)
        for scope in scopes
    ]
    return sorted(named, key=lambda pair: pair[0])


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
    }


def _pages(scope: Scope, kind: str, live: bool) -> Iterator[list[Memory]]:
    """The scope's memories of one kind and section, by id, a page at a time. Ids are a fixed
    prefix and 26 lowercase letters and digits, so the database orders them as the zip does."""
    rows = (
        Memory.objects.filter(scope=scope, kind_id=kind, valid=live)
        .defer("embedding", "search_vector", "content_hash")
        .annotate(
            scope_public_id=F("scope__public_id"),
            author_username=F("created_by__username"),
            forgotten_by_name=F("forgotten_by__username"),
            superseded_by_public_id=F("superseded_by__public_id"),
        )
        .prefetch_related(
            Prefetch(
                "provenance",
                queryset=Provenance.objects.select_related("created_by").order_by(
                    "created_at", "id"
                ),
            ),
            Prefetch(
                "versions",
                queryset=MemoryVersion.objects.select_related("edited_by").order_by("number"),
            ),
            Prefetch(
                "supersedes", queryset=Memory.objects.only("id", "public_id", "superseded_by")
            ),
        )
        .order_by("public_id")
    )
    last = ""
    while True:
        page = list(rows.filter(public_id__gt=last)[:PAGE])
        if not page:
            return
        yield page
        last = page[-1].public_id


def _disputes(memories: list[Memory]) -> dict[int, list[str]]:
    """The open queue items each memory is in (its dispute marks)."""
    ids = [memory.id for memory in memories]
    marks: dict[int, list[str]] = defaultdict(list)
    rows = Conflict.objects.filter(status=ConflictStatus.OPEN).filter(
        Q(memory_a_id__in=ids) | Q(memory_b_id__in=ids)
    )
    for public_id, a, b in rows.values_list("public_id", "memory_a_id", "memory_b_id"):
        for memory_id in {a, b} - {None}:
            marks[memory_id].append(public_id)
    return {memory_id: sorted(found) for memory_id, found in marks.items()}


def _memory_entries(directories: list[tuple[str, Scope]], *, live: bool) -> Iterator[Any]:
    section = fmt.LIVE_DIR if live else fmt.ARCHIVE_DIR
    for directory, scope in directories:
        kinds = Memory.objects.filter(scope=scope, valid=live).values_list("kind_id", flat=True)
        for kind in sorted(set(kinds.distinct())):
            for page in _pages(scope, kind, live):
                disputes = _disputes(page)
                for memory in page:
                    fields = memory_fields(memory, disputed=disputes.get(memory.id, []))
                    path = f"{section}/{directory}/{kind}/{memory.public_id}.md"
                    yield scope, path, fmt.memory_file(fields, memory.content)


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


def _conflicts(scopes: list[Scope]) -> list[dict[str, Any]]:
    rows = (
        Conflict.objects.filter(scope__in=scopes)
        .select_related("scope", "memory_a", "memory_b", "resolved_by", "challenged_by")
        .defer("memory_a__embedding", "memory_b__embedding")
        .prefetch_related(
            Prefetch(
                "actions",
                queryset=ConflictAction.objects.select_related("by", "undone_by", "retired", "kept")
                .defer("retired__embedding", "kept__embedding")
                .order_by("created_at", "id"),
            )
        )
        .order_by("public_id")
    )
    return [conflict_fields(conflict) for conflict in rows.iterator(chunk_size=PAGE)]


class _Sink:
    """Where the zip writer writes: bytes collect here until the generator hands them on."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data, self._parts = b"".join(self._parts), []
        return data


@dataclass
class _Counts:
    memories: int = 0
    archived: int = 0
    conflicts: int = 0
    files: dict[str, str] = field(default_factory=dict)


def _entry(path: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3
    info.external_attr = 0o100644 << 16
    return info


def export_archive(*, scopes: Iterable[Scope]) -> Iterator[bytes]:
    """The zip of these scopes (which the caller obtained through the access module), as a
    stream of byte strings."""
    directories = scope_directories(scopes)
    scope_list = [scope for _, scope in directories]
    counts: dict[int, _Counts] = {scope.id: _Counts() for scope in scope_list}
    digests: dict[str, str] = {}
    sink = _Sink()

    def write(archive: zipfile.ZipFile, path: str, data: bytes) -> bytes:
        archive.writestr(_entry(path), data, compresslevel=ZIP_LEVEL)
        digests[path] = hashlib.sha256(data).hexdigest()
        return sink.take()

    with zipfile.ZipFile(sink, mode="w") as archive:
        for scope, path, data in _memory_entries(directories, live=False):
            counts[scope.id].archived += 1
            yield write(archive, path, data)
        conflicts = _conflicts(scope_list)
        by_public = {scope.public_id: scope.id for scope in scope_list}
        for conflict in conflicts:
            counts[by_public[conflict["scope"]]].conflicts += 1
        yield write(archive, fmt.CONFLICTS, fmt.json_file(conflicts))
        del conflicts
        for scope, path, data in _memory_entries(directories, live=True):
            counts[scope.id].memories += 1
            yield write(archive, path, data)
        manifest = {
            "format": fmt.FORMAT_NAME,
            "format_version": fmt.FORMAT_VERSION,
            "server_version": settings.SERVER_VERSION,
            "scopes": [
                {
                    "id": scope.public_id,
                    "name": scope.name,
                    "slug": scope.slug,
                    "kind": scope.kind,
                    "directory": directory,
                    "memories": counts[scope.id].memories,
                    "archived": counts[scope.id].archived,
                    "conflicts": counts[scope.id].conflicts,
                }
                for directory, scope in directories
            ],
            "server_assigned": fmt.SERVER_ASSIGNED,
            "files": dict(sorted(digests.items())),
        }
        archive.writestr(_entry(fmt.MANIFEST), fmt.json_file(manifest), compresslevel=ZIP_LEVEL)
    yield sink.take()


def export_size_hint(*, scopes: Iterable[Scope]) -> int:
    """How many memories an export of these scopes holds (for the dashboard's progress)."""
    return Memory.objects.filter(scope__in=list(scopes)).count()
