"""The answers of portability: an import's outcome and an export's download link."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from memories.portability.archive_import import ImportResult


class ArchiveImportOut(BaseModel):
    scope: str
    imported: int  # memories written
    absorbed: int  # memories whose text the scope already held: their provenance was added
    skipped: int  # memories an earlier import of the same archive wrote
    conflicts: int  # review queue items written

    @classmethod
    def of(cls, *, scope: str, result: ImportResult) -> ArchiveImportOut:
        return cls(scope=scope, **vars(result))


class ExportLinkOut(BaseModel):
    url: str  # works once, until expires_at
    expires_at: datetime
    scopes: list[str]
    memories: int
