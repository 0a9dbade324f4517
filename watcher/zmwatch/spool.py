"""The on-disk spool: chunks cut from a transcript wait here until the server acknowledges
them, so an outage, a restart or kill -9 loses nothing. An entry is one file holding the
chunks of one cut, in order; they are sent oldest first, and the acknowledged one is taken off
the entry. A chunk the server refuses for good is set aside under `rejected/`."""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zmwatch.files import read_json, write_json

_counter = itertools.count()


@dataclass(frozen=True)
class Entry:
    path: Path
    data: dict[str, Any]

    @property
    def chunks(self) -> list[dict[str, Any]]:
        return self.data["chunks"]


class Spool:
    def __init__(self, directory: Path) -> None:
        self.directory = directory / "spool"
        self.rejected = self.directory / "rejected"

    def put(self, *, transcript: str, generation: int, meta: dict[str, Any], chunks: list) -> None:
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}.json"
        data = {"transcript": transcript, "generation": generation, **meta, "chunks": chunks}
        write_json(self.directory / name, data)

    def entries(self) -> list[Entry]:
        found = []
        for path in sorted(self.directory.glob("*.json")):
            data = read_json(path, None)
            if isinstance(data, dict) and data.get("chunks"):
                found.append(Entry(path, data))
            else:  # emptied, or not ours
                path.unlink(missing_ok=True)
        return found

    def length(self) -> int:
        return sum(len(entry.chunks) for entry in self.entries())

    def last_chunks(self) -> dict[tuple[str, int], dict[str, Any]]:
        """The last chunk waiting for each transcript (and generation), in one read."""
        last = {}
        for entry in self.entries():
            last[(entry.data["transcript"], entry.data["generation"])] = entry.chunks[-1]
        return last

    def shift(self, entry: Entry) -> Entry | None:
        """Take the entry's first chunk off (it was acknowledged); the rest of the entry."""
        rest = entry.chunks[1:]
        if not rest:
            entry.path.unlink(missing_ok=True)
            return None
        data = {**entry.data, "chunks": rest}
        write_json(entry.path, data)
        return Entry(entry.path, data)

    def reject(self, entry: Entry, reason: str) -> Entry | None:
        self.rejected.mkdir(exist_ok=True)
        chunk = {**entry.data, "chunks": entry.chunks[:1], "reason": reason}
        write_json(self.rejected / entry.path.name, chunk)
        return self.shift(entry)
