"""The answers of portability: an import's outcome and an export's download link."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from memories.portability.archive_import import ImportResult
from memories.portability.sources.service import SourceImportReport


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


class RecordOutcomeOut(BaseModel):
    source_id: str  # the record's id in the other system
    outcome: str  # write, absorb, refuse, skip, already
    reason: str = ""


class SourceImportOut(BaseModel):
    """An import from another system (or its dry run: what it would do)."""

    scope: str
    system: str
    dry_run: bool
    records: int  # records the file holds
    written: int  # new memories (in a dry run: that would be written)
    absorbed: int  # texts the scope or an earlier record of the file held: provenance added
    refused: int  # records the content guard refused (secrets)
    skipped: int  # records that are not memories, or not writable (with a reason)
    already: int  # records an earlier import of the same file wrote
    links: int  # typed links written between the imported memories
    outcomes: list[RecordOutcomeOut]  # per record, the first 1000
    truncated: bool  # more records than outcomes listed

    @classmethod
    def of(cls, *, scope: str, report: SourceImportReport) -> SourceImportOut:
        fields = vars(report) | {"outcomes": [vars(o) for o in report.outcomes]}
        return cls(scope=scope, **fields)
