"""A folder another system wrote (basic-memory's project of notes), as a zip or a directory.

Both forms answer the same two questions: which files are there (relative POSIX paths, in a
stable order) and what bytes does one hold. Everything that makes a folder unsafe is refused
with `BadSource` when the folder is opened, before a file is read: a path out of the folder
(absolute, `..`, a backslash, a drive), a symbolic link (in a directory any link, since a link
inside can be swapped for one outside between the check and the read; in a zip an entry whose
Unix mode says link), more files than `MAX_ENTRIES`, a file over `ZM_IMPORT_MAX_ENTRY_BYTES` or
more than `ZM_IMPORT_MAX_TOTAL_BYTES` in all, and in a zip an encrypted entry or one compressed
beyond any text's ratio (a bomb). A zip's reads stop at each entry's declared size, so a header
that lies stops there too.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

from django.conf import settings
from django.utils.translation import gettext as _

from memories.portability.archive import MAX_ENTRIES, MAX_RATIO
from memories.portability.sources.records import BadSource

FIELD = "body"  # the REST body (or the file the command names), as the other readers say


_DRIVE = re.compile(r"^[A-Za-z]:")  # a Windows drive: "C:/x", "C:x"


def refused(message: str) -> BadSource:
    return BadSource(FIELD, message)


class Folder(Protocol):
    def paths(self) -> list[str]:
        """The folder's files (not directories), as relative POSIX paths, sorted."""

    def read_bytes(self, path: str) -> bytes:
        """The bytes of one of `paths()`."""


def safe_relative(name: str) -> str:
    """`name` as a relative POSIX path inside the folder, or `BadSource`."""
    shown = name[:200]
    if "\\" in name or "\x00" in name or _DRIVE.match(name):
        raise refused(_("%(p)s is not a plain relative path.") % {"p": shown})
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/"):
        raise refused(_("%(p)s is an absolute path.") % {"p": shown})
    if any(part == ".." for part in path.parts):
        raise refused(_("%(p)s points out of the folder.") % {"p": shown})
    return path.as_posix()


class _Budget:
    """The limits on files and bytes, counted as entries are listed."""

    def __init__(self, max_total: int | None, max_entries: int) -> None:
        self.max_entry = settings.IMPORT_MAX_ENTRY_BYTES
        self.left = settings.IMPORT_MAX_TOTAL_BYTES if max_total is None else max_total
        self.max_entries = max_entries
        self.count = 0

    def add(self, path: str, size: int) -> None:
        self.count += 1
        if self.count > self.max_entries:
            raise refused(_("The folder holds too many files."))
        if size > self.max_entry:
            raise refused(_("%(p)s is larger than the limit per file.") % {"p": path[:200]})
        self.left -= size
        if self.left < 0:
            raise refused(_("The folder holds more than the limit in all."))


class ZipFolder:
    """A folder sent as a zip (the REST body): checked whole when opened."""

    def __init__(
        self, upload: IO[bytes], *, max_total: int | None = None, max_entries: int = MAX_ENTRIES
    ) -> None:
        try:
            self._zip = zipfile.ZipFile(upload)
        except (zipfile.BadZipFile, OSError, ValueError):
            raise refused(_("The upload is not a zip of a folder.")) from None
        budget = _Budget(max_total, max_entries)
        self._infos: dict[str, zipfile.ZipInfo] = {}
        infos = self._zip.infolist()
        if len(infos) > max_entries:
            raise refused(_("The folder holds too many files."))
        for info in infos:
            path = safe_relative(info.filename)
            if info.is_dir():
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                raise refused(_("%(p)s is a symbolic link.") % {"p": path[:200]})
            if info.flag_bits & 0x1:
                raise refused(_("%(p)s is encrypted.") % {"p": path[:200]})
            if path in self._infos:
                raise refused(_("%(p)s appears twice.") % {"p": path[:200]})
            if info.file_size > 1024 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise refused(_("%(p)s is compressed beyond any text's ratio.") % {"p": path[:200]})
            budget.add(path, info.file_size)
            self._infos[path] = info

    def paths(self) -> list[str]:
        return sorted(self._infos)

    def read_bytes(self, path: str) -> bytes:
        info = self._infos[path]
        try:
            with self._zip.open(info) as entry:
                data = entry.read(info.file_size + 1)
        except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError) as exc:
            raise refused(_("The zip is damaged: %(e)s") % {"e": str(exc)[:200]}) from None
        if len(data) != info.file_size:
            raise refused(_("%(p)s is not the size its header declares.") % {"p": path[:200]})
        return data


class DirectoryFolder:
    """A folder on the server's disk (the management command): walked without following a
    link, and any link refused."""

    def __init__(
        self, root: Path | str, *, max_total: int | None = None, max_entries: int = MAX_ENTRIES
    ) -> None:
        self._root = Path(root)
        if self._root.is_symlink() or not self._root.is_dir():
            raise refused(_("%(p)s is not a directory.") % {"p": str(root)[:200]})
        budget = _Budget(max_total, max_entries)
        self._paths: list[str] = []
        pending = [self._root]
        while pending:
            directory = pending.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    relative = Path(entry.path).relative_to(self._root).as_posix()
                    if entry.is_symlink():
                        raise refused(_("%(p)s is a symbolic link.") % {"p": relative[:200]})
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        # A walk without links stays inside: its names need no path check.
                        budget.add(relative, entry.stat(follow_symlinks=False).st_size)
                        self._paths.append(relative)
                    # Sockets, fifos and devices are not a note's file: passed over.
        self._paths.sort()

    def paths(self) -> list[str]:
        return self._paths

    def read_bytes(self, path: str) -> bytes:
        # O_NOFOLLOW: a file swapped for a link after the walk is refused, not followed.
        limit = settings.IMPORT_MAX_ENTRY_BYTES
        try:
            descriptor = os.open(self._root / path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as exc:
            raise refused(
                _("%(p)s cannot be read: %(e)s") % {"p": path[:200], "e": exc.strerror}
            ) from None
        with os.fdopen(descriptor, "rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise refused(_("%(p)s is larger than the limit per file.") % {"p": path[:200]})
        return data


def open_folder(source: Path | str | IO[bytes], *, max_total: int | None = None) -> Folder:
    """A directory path as a `DirectoryFolder`; a zip (a path to one, or a file) as a
    `ZipFolder`."""
    if isinstance(source, str | Path):
        path = Path(source)
        if path.is_dir() and not path.is_symlink():
            return DirectoryFolder(path, max_total=max_total)
        try:
            handle = path.open("rb")  # noqa: SIM115 - kept open by the zip for the import
        except OSError as exc:
            raise refused(
                _("%(p)s cannot be read: %(e)s") % {"p": str(path)[:200], "e": exc.strerror}
            ) from None
        return ZipFolder(handle, max_total=max_total)
    return ZipFolder(source, max_total=max_total)


def decoded(path: str, data: bytes) -> str:
    """A file's text, or `BadSource` naming it when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refused(
            _("%(p)s is not UTF-8 (byte %(at)d).") % {"p": path[:200], "at": exc.start}
        ) from None
