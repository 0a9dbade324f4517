"""Export: scopes as a zip of markdown files, written as it is read, in bounded memory.

The archive is produced by a generator: memories are read in pages (`memories.portability.rows`),
each memory file is deflated as it is made, and the bytes are handed on in parts of about
`PART_BYTES` (each part a hop from the server's worker thread to its event loop) before more
rows are read. The zip's central directory and the manifest's list of files collect in spooled
temporary files (in memory while small, on disk past a few MB), so memory use does not grow
with the scope.

Determinism: entries in sorted path order with a fixed date and fixed attributes, the manifest
last; the same rows always give the same bytes.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import Prefetch

from memories.models import Conflict, ConflictAction, Entity, Memory
from memories.portability import format as fmt
from memories.portability.fields import conflict_fields, entity_fields
from memories.portability.rows import PAGE, memory_rows
from memories.portability.zipstream import ZipStream
from scopes.models import Scope

ZIP_LEVEL = 6
PART_BYTES = 1 << 18
_SPOOL_BYTES = 4 << 20


def _as_path(name: str) -> str:
    """The key that sorts directory names as the paths that start with them sort ("a-b/"
    before "a/", as `-` comes before `/`)."""
    return f"{name}/"


def scope_directories(scopes: Iterable[Scope]) -> list[tuple[str, Scope]]:
    """Each scope's directory in the archive (its slug; with its id too when two scopes of the
    export share a slug), sorted."""
    scopes = list(scopes)
    slugs = [scope.slug for scope in scopes]
    named = [
        (scope.slug if slugs.count(scope.slug) == 1 else f"{scope.slug}-{scope.public_id}", scope)
        for scope in scopes
    ]
    return sorted(named, key=lambda pair: _as_path(pair[0]))


def _memory_entries(
    directories: list[tuple[str, Scope]], *, live: bool
) -> Iterator[tuple[Scope, str, bytes]]:
    section = fmt.LIVE_DIR if live else fmt.ARCHIVE_DIR
    for directory, scope in directories:
        kinds = Memory.objects.filter(scope=scope, valid=live).values_list("kind_id", flat=True)
        for kind in sorted(set(kinds.distinct()), key=_as_path):
            for public_id, fields, content in memory_rows(scope=scope, kind=kind, live=live):
                path = f"{section}/{directory}/{kind}/{public_id}.md"
                yield scope, path, fmt.memory_file(fields, content)


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


def _entities(scopes: list[Scope]) -> list[dict[str, Any]]:
    rows = (
        Entity.objects.filter(scope__in=scopes)
        .select_related("scope", "merged_into")
        .prefetch_related("aliases")
        .order_by("scope__public_id", "name", "public_id")
    )
    return [entity_fields(entity) for entity in rows.iterator(chunk_size=PAGE)]


class _Files:
    """The manifest's `path: sha256` pairs, spooled as they are made (in path order)."""

    def __init__(self) -> None:
        self._lines = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115
        self._last = ""

    def add(self, path: str, data: bytes) -> None:
        # Entries come sorted by construction (directories and kinds sorted as paths, ids of
        # one length in lowercase ASCII from the database): a manifest in another order would
        # be another archive, so a break of that is an error, not a reordering.
        if path <= self._last:
            raise RuntimeError(f"export entries out of path order at {path}")
        line = fmt.manifest_line(path, hashlib.sha256(data).hexdigest(), first=not self._last)
        self._lines.write(line)
        self._last = path

    def lines(self) -> Iterator[bytes]:
        self._lines.seek(0)
        while chunk := self._lines.read(PART_BYTES):
            yield chunk
        self._lines.close()


@dataclass
class _Counts:
    memories: int = 0
    archived: int = 0
    conflicts: int = 0


def _manifest(directories: list[tuple[str, Scope]], counts: dict[int, _Counts]) -> dict:
    return {
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
    }


def _parts(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The pieces joined into parts of at least `PART_BYTES` (the last one maybe smaller)."""
    held: list[bytes] = []
    size = 0
    for piece in pieces:
        held.append(piece)
        size += len(piece)
        if size >= PART_BYTES:
            yield b"".join(held)
            held, size = [], 0
    if held:
        yield b"".join(held)


def _zip_pieces(
    directories: list[tuple[str, Scope]], progress: Callable[[int], None]
) -> Iterator[bytes]:
    scope_list = [scope for _, scope in directories]
    counts: dict[int, _Counts] = {scope.id: _Counts() for scope in scope_list}
    files = _Files()
    zipped = ZipStream(level=ZIP_LEVEL)

    def entry(path: str, data: bytes) -> bytes:
        files.add(path, data)
        return zipped.entry(path, data)

    written = 0
    for scope, path, data in _memory_entries(directories, live=False):
        counts[scope.id].archived += 1
        written += 1
        progress(written)
        yield entry(path, data)
    conflicts = _conflicts(scope_list)
    by_public = {scope.public_id: scope.id for scope in scope_list}
    for conflict in conflicts:
        counts[by_public[conflict["scope"]]].conflicts += 1
    yield entry(fmt.CONFLICTS, fmt.json_file(conflicts))
    del conflicts
    entities = _entities(scope_list)
    if entities:
        yield entry(fmt.ENTITIES, fmt.json_file(entities))
    del entities
    for scope, path, data in _memory_entries(directories, live=True):
        counts[scope.id].memories += 1
        written += 1
        progress(written)
        yield entry(path, data)
    yield zipped.begin(fmt.MANIFEST)
    for part in _parts(fmt.manifest_parts(_manifest(directories, counts), files.lines())):
        yield zipped.feed(part)
    yield zipped.end()
    yield from zipped.finish()


def export_archive(
    *, scopes: Iterable[Scope], progress: Callable[[int], None] | None = None
) -> Iterator[bytes]:
    """The zip of these scopes (which the caller obtained through the access module), as a
    stream of byte strings. `progress`, if given, hears how many memories are written so far,
    after each one."""
    yield from _parts(_zip_pieces(scope_directories(scopes), progress or _unheard))


def _unheard(count: int) -> None:
    """No one listens to the progress."""


def export_size_hint(*, scopes: Iterable[Scope]) -> int:
    """How many memories an export of these scopes holds (for the dashboard's progress)."""
    return Memory.objects.filter(scope__in=list(scopes)).count()
