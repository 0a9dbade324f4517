"""Consent, fail-closed: which project a transcript belongs to, and whether it may be sent.

The project is the git repository enclosing the transcript's working directory. It is captured
only when an allowlist glob of the configuration matches it (or a folder above it), or a
`.zero-memory-allow` file sits in it or above it; a `.zero-memory-ignore` file in it or above
it wins over both. No project (no repository, a directory that is gone): nothing is sent.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path

from zmwatch.config import Config

ALLOW_FILE = ".zero-memory-allow"
IGNORE_FILE = ".zero-memory-ignore"


def project_of(cwd: str) -> Path | None:
    """The git repository (a folder holding `.git`) that encloses `cwd`, if any."""
    if not cwd or not os.path.isabs(cwd):
        return None
    here = Path(cwd)
    if not here.is_dir():
        return None
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _spellings(project: Path) -> list[str]:
    """The project and each folder above it, as written and with links resolved."""
    spelled = []
    for path in {project, Path(os.path.realpath(project))}:
        spelled += [str(folder) for folder in (path, *path.parents)]
    return spelled


def _matches(glob: str, project: Path) -> bool:
    pattern = os.path.expanduser(glob).rstrip("/") or "/"
    return any(fnmatchcase(spelled, pattern) for spelled in _spellings(project))


def _marked(project: Path, name: str) -> bool:
    return any((folder / name).exists() for folder in (project, *project.parents))


def allowed(project: Path | None, config: Config) -> bool:
    if project is None or _marked(project, IGNORE_FILE):
        return False
    return any(_matches(glob, project) for glob in config.allow) or _marked(project, ALLOW_FILE)


def scope_for(project: Path, config: Config) -> str | None:
    """The scope the configuration maps this project to (None: the user's personal scope)."""
    for glob, scope in config.scopes.items():
        if _matches(glob, project):
            return scope
    return None
