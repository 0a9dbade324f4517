"""Small file helpers: an atomic JSON write that survives kill -9 and power loss, and the lock
that keeps two watchers from reading the same transcript at once."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import Any


def write_json(path: Path, data: Any) -> None:
    """Replace `path` with `data` in one step: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("w", encoding="utf-8") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    with contextlib.suppress(OSError):  # the rename itself, durable
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):  # none yet, or not ours
        return default


class Lock:
    """An exclusive lock on the state directory (flock: released when the process dies), with
    the role of the process that holds it, so a hook knows whether a `run` is there."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = directory / "lock"
        self._fd: int | None = None

    def acquire(self, role: str) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "role": role}).encode())
        self._fd = fd
        return True

    def holder(self) -> dict[str, Any]:
        """Who holds the lock, as it wrote itself down (a holder that just took the lock may
        not have yet: the previous one's note is then still there, its process gone)."""
        return read_json(self.path, {}) or {}

    def held_by_run(self) -> bool:
        holder = self.holder()
        if holder.get("role") != "run" or not isinstance(holder.get("pid"), int):
            return False
        try:
            os.kill(holder["pid"], 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
