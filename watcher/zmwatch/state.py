"""What the watcher remembers between runs: per transcript the byte offset up to which the
server has acknowledged everything (saved only after an acknowledgement), the overlap the next
chunk opens with, the lines skipped as unreadable and whether its format looked unknown; and
the delivery's failures and last error."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from zmwatch.files import read_json, write_json

BACKOFF_FIRST = 2.0
BACKOFF_MAX = 60.0
UNREADABLE_KEPT = 5  # positions of unreadable lines remembered per transcript (the last ones)


class State:
    def __init__(self, directory: Path) -> None:
        self.path = directory / "state.json"
        data = read_json(self.path, {})
        self.files: dict[str, dict[str, Any]] = data.get("files", {})
        self.delivery: dict[str, Any] = data.get("delivery", {})

    def save(self) -> None:
        write_json(self.path, {"files": self.files, "delivery": self.delivery})

    def record(self, path: str) -> dict[str, Any] | None:
        return self.files.get(path)

    def start(self, path: str, *, inode: int, generation: int) -> dict[str, Any]:
        """A transcript seen for the first time, or again after it was truncated or replaced:
        nothing of it is delivered yet."""
        record = {"inode": inode, "generation": generation, "offset": 0, "tail": ""}
        self.files[path] = record
        self.save()
        return record

    def acknowledged(self, path: str, *, generation: int, end: int, tail: str) -> None:
        """The server has the chunk that ends at `end`: the offset moves there (unless the
        transcript was replaced since the chunk was cut)."""
        record = self.files.get(path)
        if record is not None and record["generation"] == generation and end >= record["offset"]:
            record["offset"] = end
            record["tail"] = tail
        self.delivery.update(failures=0, next_attempt=0)
        self.save()

    def unreadable(self, path: str, positions: list[int]) -> None:
        """Lines at these byte offsets were skipped: not JSON, or not readable by the adapter.
        (A line read again after a restart, at or before the last position noted, is not
        counted twice.)"""
        record = self.files[path]
        noted = record.get("unreadable_at", [])
        new = [position for position in positions if not noted or position > noted[-1]]
        if new:
            record["unreadable"] = record.get("unreadable", 0) + len(new)
            record["unreadable_at"] = [*noted, *new][-UNREADABLE_KEPT:]
            self.save()

    def format_checked(self, path: str, unknown: list[int] | None) -> None:
        """The format check's verdict: [entries of unknown kinds, entries read] when most of
        them are unknown, None when the format is recognised (saved when it changes)."""
        record = self.files[path]
        if bool(record.get("unknown_format")) != bool(unknown):
            record["unknown_format"] = unknown
            self.save()

    def failed(self, error: str, *, retry_after: float | None = None) -> float:
        """A send failed: the next attempt waits 2 s, doubled on each failure up to 60 s (or
        the server's Retry-After, within 60 s). Returns the wait."""
        failures = int(self.delivery.get("failures", 0)) + 1
        wait = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (failures - 1))
        if retry_after is not None:
            wait = min(BACKOFF_MAX, max(wait, retry_after))
        now = time.time()
        self.delivery.update(
            failures=failures, next_attempt=now + wait, last_error=error, last_error_at=now
        )
        self.save()
        return wait

    def note_error(self, error: str) -> None:
        self.delivery.update(last_error=error, last_error_at=time.time())
        self.save()

    def may_send(self) -> bool:
        return time.time() >= float(self.delivery.get("next_attempt", 0))
