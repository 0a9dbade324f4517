"""Reading an archive someone uploads: every check before anything is written.

An archive is refused whole (`BadArchive`, a 400) when it is not a zip, names a path outside
the format's layout (absolute, `..`, a backslash, an unknown directory), holds an entry larger
than `ZM_IMPORT_MAX_ENTRY_BYTES` or more than `ZM_IMPORT_MAX_TOTAL_BYTES` in all once
decompressed (declared sizes are checked first, then the bytes actually read, so a zip bomb
stops at the limit), compresses an entry more than `MAX_RATIO` times, lacks the manifest or
names another format version, or when a file's sha256 differs from the manifest's, a file is
missing from it or not in it, or a memory file does not parse.

A file is also refused, naming it, when its YAML uses anchors, aliases or tags, when a time or
number is beyond what the server represents (`incoming`), or when a memory is not what
`remember` would write (`guard`: its limits and content guard).
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from typing import IO, Any

from django.conf import settings
from django.utils.translation import gettext as _
from pydantic import ValidationError

from memories.kinds import all_kinds
from memories.models import (
    AuthorKind,
    ConflictStatus,
    Relation,
    Resolution,
    SourceKind,
    TranslationStatus,
)
from memories.portability import format as fmt
from memories.portability.guard import held_to_remember, refuse_unstorable
from memories.portability.incoming import ID_PART, Archive, ConflictIn, EntityIn, MemoryIn
from zeromemory.core.errors import DomainError, ValidationFailed
from zeromemory.core.secrets import refuse_secrets

MAX_RATIO = 200  # deflate reaches ~10x on prose; 200x is a bomb, not text
MAX_ENTRIES = 1_000_000
_PATH = re.compile(
    rf"^(?P<section>memories|archive)/(?P<dir>[a-z0-9]+(?:-[a-z0-9_]+)*)/"
    rf"(?P<kind>[a-z0-9_-]{{1,32}})/(?P<id>mem_{ID_PART})\.md$"
)


class BadArchive(ValidationFailed):
    """A refused archive: one field, `archive`, says why."""

    def __init__(self, message: str) -> None:
        super().__init__("archive", message)


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: list[int]) -> bytes:
    """An entry's bytes, reading at most its declared size (plus one byte to catch a lie)."""
    with archive.open(info) as entry:
        data = entry.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise BadArchive(_("%(p)s is not the size its header declares.") % {"p": info.filename})
    budget[0] -= len(data)
    if budget[0] < 0:
        raise BadArchive(_("The archive decompresses to more than the limit."))
    return data


def _check_entries(archive: zipfile.ZipFile, max_total: int) -> list[zipfile.ZipInfo]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise BadArchive(_("The archive holds too many files."))
    seen: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        if name in seen:
            raise BadArchive(_("%(p)s appears twice.") % {"p": name[:200]})
        seen.add(name)
        if name not in (fmt.MANIFEST, fmt.CONFLICTS, fmt.ENTITIES) and not _PATH.match(name):
            raise BadArchive(_("%(p)s is not a path of the export format.") % {"p": name[:200]})
        if info.flag_bits & 0x1:
            raise BadArchive(_("%(p)s is encrypted.") % {"p": name})
        if info.file_size > settings.IMPORT_MAX_ENTRY_BYTES:
            raise BadArchive(_("%(p)s is larger than the limit per file.") % {"p": name})
        if info.file_size > 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise BadArchive(_("%(p)s is compressed beyond any text's ratio.") % {"p": name})
        total += info.file_size
    if total > max_total:
        raise BadArchive(_("The archive decompresses to more than the limit."))
    if fmt.MANIFEST not in seen:
        raise BadArchive(_("The archive has no manifest.json."))
    return infos


def _manifest(data: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(data)
    except ValueError:
        raise BadArchive(_("manifest.json is not JSON.")) from None
    if not isinstance(manifest, dict) or manifest.get("format") != fmt.FORMAT_NAME:
        raise BadArchive(_("manifest.json does not describe a zero-memory export."))
    if manifest.get("format_version") != fmt.FORMAT_VERSION:
        raise BadArchive(
            _("Format version %(v)s is not one this server reads (it reads %(ours)s).")
            % {"v": str(manifest.get("format_version"))[:20], "ours": fmt.FORMAT_VERSION}
        )
    if not isinstance(manifest.get("files"), dict):
        raise BadArchive(_("manifest.json lists no files."))
    return manifest


def _refused(path: str, exc: DomainError) -> BadArchive:
    field = next(iter(exc.details), "")
    return BadArchive(
        _("%(p)s is refused: %(f)s: %(e)s") % {"p": path, "f": field, "e": exc.message}
    )


def _parse(path: str, data: bytes) -> Any:
    try:
        if path == fmt.CONFLICTS:
            items = json.loads(data)
            refuse_unstorable(items)
            conflicts = [ConflictIn.model_validate(item) for item in items]
            for conflict in conflicts:
                if len(conflict.rationale) > settings.MAX_MEMORY_CHARS:
                    raise ValueError(f"{conflict.id}.rationale is longer than a memory may be")
                refuse_secrets({f"{conflict.id}.rationale": conflict.rationale})
            return conflicts
        if path == fmt.ENTITIES:
            items = json.loads(data)
            refuse_unstorable(items)
            if not isinstance(items, list):
                raise ValueError("entities.json is not a list")
            entities = [EntityIn.model_validate(item) for item in items]
            for entity in entities:
                refuse_secrets({"entities": " ".join([entity.name, *entity.aliases])})
            return entities
        fields, body = fmt.split_memory_file(data)
        refuse_unstorable(fields)
        refuse_unstorable(body, "the body")
        memory = MemoryIn.model_validate(fields)
    except (ValueError, TypeError, ValidationError, RecursionError) as exc:
        message = _("%(p)s does not parse: %(e)s") % {"p": path, "e": str(exc)[:300]}
        raise BadArchive(message) from None
    except DomainError as exc:
        raise _refused(path, exc) from None
    match = _PATH.match(path)
    live = match["section"] == fmt.LIVE_DIR
    if (
        memory.id != match["id"]
        or memory.kind != match["kind"]
        or live != (memory.state == "valid")
    ):
        raise BadArchive(_("%(p)s does not hold the memory its path names.") % {"p": path})
    try:
        refuse_secrets({"entities": " ".join(mention.name for mention in memory.entities)})
        return held_to_remember(memory.model_copy(update={"content": body, "path": path}))
    except DomainError as exc:
        raise _refused(path, exc) from None


def read_archive(upload: IO[bytes], *, max_total: int | None = None) -> Archive:
    """The archive in `upload` (a seekable file), checked whole, or `BadArchive`; `max_total`
    bounds what it decompresses to (`ZM_IMPORT_MAX_TOTAL_BYTES` when not given)."""
    max_total = settings.IMPORT_MAX_TOTAL_BYTES if max_total is None else max_total
    try:
        archive = zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise BadArchive(_("The upload is not a zip archive.")) from None
    with archive:
        infos = _check_entries(archive, max_total)
        budget = [max_total]
        try:
            by_name = {info.filename: info for info in infos}
            manifest = _manifest(_read(archive, by_name.pop(fmt.MANIFEST), budget))
            listed = manifest["files"]
            if set(listed) != set(by_name):
                raise BadArchive(_("The manifest does not list exactly the archive's files."))
            memories: list[MemoryIn] = []
            conflicts: list[ConflictIn] = []
            entities: list[EntityIn] = []
            for name in sorted(by_name):
                data = _read(archive, by_name[name], budget)
                if hashlib.sha256(data).hexdigest() != listed[name]:
                    raise BadArchive(_("%(p)s does not match its hash.") % {"p": name})
                parsed = _parse(name, data)
                if name == fmt.CONFLICTS:
                    conflicts = parsed
                elif name == fmt.ENTITIES:
                    entities = parsed
                else:
                    memories.append(parsed)
        except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError) as exc:
            raise BadArchive(_("The archive is damaged: %(e)s") % {"e": str(exc)[:200]}) from None
    return Archive(manifest=manifest, memories=memories, conflicts=conflicts, entities=entities)


def check_references(archive: Archive) -> None:
    """What the archive refers to must exist: kinds here, memories in the archive, choices."""
    kinds = all_kinds()
    ids = {memory.id for memory in archive.memories}
    if len(ids) != len(archive.memories):
        raise BadArchive(_("A memory id appears twice."))
    for memory in archive.memories:
        used = {memory.kind} | {version.kind for version in memory.versions}
        if used - set(kinds):
            raise BadArchive(
                _("%(id)s has a kind this server does not know: %(k)s.")
                % {"id": memory.id, "k": ", ".join(sorted(used - set(kinds)))}
            )
        if memory.superseded_by is not None and memory.superseded_by not in ids:
            raise BadArchive(
                _("%(id)s is superseded by a memory not in the archive.") % {"id": memory.id}
            )
        if any(link.to not in ids or link.to == memory.id for link in memory.links):
            raise BadArchive(
                _("%(id)s links to itself or to a memory not in the archive.") % {"id": memory.id}
            )
        live = [(link.to, link.type) for link in memory.links if link.removed is None]
        if len(live) != len(set(live)):
            raise BadArchive(_("%(id)s makes the same live link twice.") % {"id": memory.id})
        if (memory.superseded_by is not None) != (memory.state == "superseded"):
            raise BadArchive(_("%(id)s has a state its links contradict.") % {"id": memory.id})
        if memory.validity and (memory.validity[-1].until is None) != (memory.state == "valid"):
            # Whether a memory is valid is what its last period says (`Memory.valid`).
            raise BadArchive(
                _("%(id)s has a state its validity periods contradict.") % {"id": memory.id}
            )
        if memory.author.kind not in AuthorKind.values:
            raise BadArchive(_("%(id)s has an unknown author kind.") % {"id": memory.id})
        if memory.translation not in TranslationStatus.values:
            raise BadArchive(_("%(id)s has an unknown translation status.") % {"id": memory.id})
        if any(row.source not in SourceKind.values for row in memory.provenance):
            raise BadArchive(_("%(id)s has provenance of an unknown source.") % {"id": memory.id})
    for conflict in archive.conflicts:
        named = {conflict.memory_a, conflict.memory_b} | {
            ref for action in conflict.actions for ref in (action.retired, action.kept)
        }
        if named - {None} - ids:
            raise BadArchive(_("%(id)s names a memory not in the archive.") % {"id": conflict.id})
        if (
            conflict.status not in ConflictStatus.values
            or conflict.verdict not in ["", *Relation.values]
            or conflict.resolution not in ["", *Resolution.values]
            or any(action.resolution not in Resolution.values for action in conflict.actions)
        ):
            raise BadArchive(_("%(id)s has an unknown status or verdict.") % {"id": conflict.id})
