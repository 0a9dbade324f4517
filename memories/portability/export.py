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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F, Prefetch, Q

from memories.models import (
    Conflict,
    ConflictAction,
    ConflictStatus,
    Memory,
    MemoryVersion,
    Provenance,
    ValidityPeriod,
)
from memories.portability import format as fmt
from memories.portability.fields import conflict_fields, memory_fields
from scopes.models import Scope

PAGE = 500
# 1980-01-01, the earliest time a zip entry can carry: every entry has it.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ZIP_LEVEL = 6


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
            Prefetch(
                "validity_periods",
                queryset=ValidityPeriod.objects.select_related(
                    "started_by", "ended_by", "replaced_by"
                ).order_by("valid_from", "id"),
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


def export_archive(
    *, scopes: Iterable[Scope], progress: Callable[[int], None] | None = None
) -> Iterator[bytes]:
    """The zip of these scopes (which the caller obtained through the access module), as a
    stream of byte strings. `progress`, if given, hears how many memories are written so far,
    after each one."""
    directories = scope_directories(scopes)
    scope_list = [scope for _, scope in directories]
    counts: dict[int, _Counts] = {scope.id: _Counts() for scope in scope_list}
    digests: dict[str, str] = {}
    sink = _Sink()

    written = 0

    def write(archive: zipfile.ZipFile, path: str, data: bytes) -> bytes:
        archive.writestr(_entry(path), data, compresslevel=ZIP_LEVEL)
        digests[path] = hashlib.sha256(data).hexdigest()
        return sink.take()

    def written_one() -> None:
        nonlocal written
        written += 1
        if progress is not None:
            progress(written)

    with zipfile.ZipFile(sink, mode="w") as archive:
        for scope, path, data in _memory_entries(directories, live=False):
            counts[scope.id].archived += 1
            written_one()
            yield write(archive, path, data)
        conflicts = _conflicts(scope_list)
        by_public = {scope.public_id: scope.id for scope in scope_list}
        for conflict in conflicts:
            counts[by_public[conflict["scope"]]].conflicts += 1
        yield write(archive, fmt.CONFLICTS, fmt.json_file(conflicts))
        del conflicts
        for scope, path, data in _memory_entries(directories, live=True):
            counts[scope.id].memories += 1
            written_one()
            yield write(archive, path, data)
        manifest = {
            "format": fmt.FORMAT_NAME,
            "format_version": fmt.FORMAT_VERSION,
            "server_version": fmt.SERVER_VERSION,
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
