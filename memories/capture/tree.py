"""The files bootstrap and import find by walking a folder tree the operator named.

A repository can hold symbolic links, and whoever wrote the repository chose where they point:
`docs/notes.md` → `/home/deploy/.aws/credentials` would otherwise be read by the server's user
and ingested into a team scope. So a link is followed only when its target resolves inside the
tree: to a file there (read once, under its own path when the walk meets that first) or to a
folder there (walked once, so a link to the folder itself or to a parent ends the walk). Every
other link is skipped, with the reason, for the command to print.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

OUTSIDE = "a link to {target}, outside {root}"
BROKEN = "a link to nothing"
LOOP = "a link that leads back to itself"
SEEN = "another path to {target}, found already"


@dataclass(frozen=True)
class Found:
    path: Path  # as found under the tree (what the command shows and records)
    real: Path  # what it resolves to, inside the tree (what is read)


@dataclass
class TreeWalk:
    """Regular files under `root`, none reached through a link that leaves it."""

    root: Path
    wanted: Callable[[Path], bool] = lambda path: True
    found: list[Found] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    _seen: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def add(self, path: Path) -> None:
        """One entry of the tree: a wanted regular file is kept, a folder walked in name order;
        anything else (a socket, a FIFO) is ignored."""
        if not path.is_dir() and not self.wanted(path):
            return
        try:
            real = path.resolve()
        except RuntimeError:  # a cycle of links (before Python 3.13; later, a path to nothing)
            self.skipped.append((path, LOOP))
            return
        if not real.is_relative_to(self.root):
            self.skipped.append((path, OUTSIDE.format(target=real, root=self.root)))
        elif not real.exists():
            self.skipped.append((path, BROKEN))
        elif real in self._seen:
            self.skipped.append((path, SEEN.format(target=real)))
        elif real.is_dir():
            self._seen.add(real)
            try:  # links last, so a file is found under its own path before a link's
                entries = sorted(path.iterdir(), key=lambda entry: (entry.is_symlink(), entry))
            except OSError as exc:
                self.skipped.append((path, exc.strerror or type(exc).__name__))
                return
            for entry in entries:
                self.add(entry)
        elif real.is_file():
            self._seen.add(real)
            self.found.append(Found(path, real))
