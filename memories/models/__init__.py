"""Memories' models, by what they hold: the catalogues, the memory, what hangs off it, activity.

Memories are add-only. Nothing deletes one: forget and supersede set `valid` to False and record
why; restore sets it back.
"""

from memories.activity.models import ActivityLog, ActivityOperation, ActivityOutcome
from memories.models.catalogue import (
    AUTHOR_RANKS,
    EMBEDDING_DIMENSIONS,
    AuthorKind,
    MemoryKind,
    MemoryState,
    SourceKind,
    TranslationStatus,
    authenticated_author_kind,
)
from memories.models.chunk import Chunk, ChunkSource, ChunkStatus
from memories.models.conflict import (
    Conflict,
    ConflictAction,
    ConflictStatus,
    HygieneScan,
    Relation,
    Resolution,
)
from memories.models.entities import (
    ENTITY_NAME_MAX_CHARS,
    Entity,
    EntityAlias,
    EntityKind,
    EntityMention,
    EntityMerge,
    EntitySplit,
    MentionSource,
)
from memories.models.insights import (
    DailyFigures,
    DailyRecalled,
    DailyVisitor,
    EmptyRead,
    LastVisit,
    LlmPath,
    LlmSpend,
)
from memories.models.links import LinkType, MemoryLink
from memories.models.memory import Memory
from memories.models.portability import (
    ExportJob,
    ExportJobStatus,
    ExportTicket,
    ImportedMemory,
    PurgeRecord,
)
from memories.models.records import IdempotencyRecord, MemoryVersion, MemoryWindow, Provenance
from memories.models.rules import ReportedUse, Rule, RuleStatus, RuleVersion, UsageCounter
from memories.models.search import SEARCH_PARTITIONS, MemorySearch
from memories.models.validity import ValidityEnd, ValidityPeriod, ValidityStart

__all__ = [
    "AUTHOR_RANKS",
    "ENTITY_NAME_MAX_CHARS",
    "EMBEDDING_DIMENSIONS",
    "ActivityLog",
    "ActivityOperation",
    "ActivityOutcome",
    "AuthorKind",
    "Chunk",
    "ChunkSource",
    "ChunkStatus",
    "Conflict",
    "DailyFigures",
    "DailyRecalled",
    "DailyVisitor",
    "Entity",
    "EntityAlias",
    "EntityKind",
    "EntityMention",
    "EntityMerge",
    "EntitySplit",
    "EmptyRead",
    "LastVisit",
    "LinkType",
    "ConflictAction",
    "ConflictStatus",
    "ExportJob",
    "ExportJobStatus",
    "ExportTicket",
    "HygieneScan",
    "IdempotencyRecord",
    "ImportedMemory",
    "LlmPath",
    "LlmSpend",
    "Memory",
    "MemoryKind",
    "MemoryLink",
    "MemorySearch",
    "MemoryState",
    "MemoryVersion",
    "MemoryWindow",
    "MentionSource",
    "Provenance",
    "SEARCH_PARTITIONS",
    "PurgeRecord",
    "Relation",
    "ReportedUse",
    "Resolution",
    "Rule",
    "RuleStatus",
    "RuleVersion",
    "SourceKind",
    "TranslationStatus",
    "UsageCounter",
    "ValidityEnd",
    "ValidityPeriod",
    "ValidityStart",
    "authenticated_author_kind",
]
