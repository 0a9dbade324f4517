"""The readers of other systems' files, by the name the surfaces take (`import_from mem0 ...`,
`POST .../import-from/mem0`).

A reader is `read(source) -> Iterator[SourceRecord | SkippedRecord]` (see `records`): `source`
is a seekable binary file (`IO[bytes]`) holding what the system wrote (its JSON as is, or a zip
of a folder), or, from the command, a `pathlib.Path` of a folder. A reader module is imported
when its system is asked for, so a missing optional module only fails that system.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Union

from memories.portability.sources.records import SkippedRecord, SourceRecord

SourceInput = Union[IO[bytes], Path]  # noqa: UP007 - a runtime alias
# A reader of a file, and the most bytes a folder's files may hold uncompressed (None: the
# command's `ZM_IMPORT_MAX_TOTAL_BYTES`; a request's is `ZM_IMPORT_MAX_REQUEST_BYTES`).
Reader = Callable[[SourceInput, int | None], Iterator[SourceRecord | SkippedRecord]]


def _lazy(module: str, *, folder: bool = False) -> Reader:
    def read(
        source: SourceInput, max_total: int | None = None
    ) -> Iterator[SourceRecord | SkippedRecord]:
        reader = importlib.import_module(f"memories.portability.sources.{module}")
        if folder:
            return reader.read(source, max_total=max_total)
        return reader.read(source)

    read.__name__ = f"read_{module}"
    return read


# One row per system; the key is the name the surfaces take.
READERS: dict[str, Reader] = {
    "mem0": _lazy("mem0"),
    "letta": _lazy("letta"),
    "supermemory": _lazy("supermemory"),
    "basic-memory": _lazy("basic_memory", folder=True),
    "graphiti": _lazy("graphiti"),
}
