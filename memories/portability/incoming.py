"""An archive's files as this server reads them: one model per thing the format holds.

Every time is an `Instant`: aware (UTC when the archive names no zone), from `EARLIEST` to a day
past the server's clock, so nothing the server computes with a time (age decay, validity) meets
one it cannot represent. Version numbers fit a PostgreSQL integer; scores are finite.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from django.utils import timezone
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from memories.models import LinkType

ID_PART = r"[0-9a-z]{26}"
MEMORY_ID = re.compile(rf"^mem_{ID_PART}$")
CONFLICT_ID = re.compile(rf"^cfl_{ID_PART}$")
INT4 = 2**31 - 1
# The earliest time an archive may name: older than any memory this format could hold, and far
# inside what the server's time arithmetic (age decay, validity) represents.
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
# How far past the server's clock an archive's time may be (another server's clock may be ahead).
CLOCK_SKEW = timedelta(days=1)


def _bounded(value: datetime) -> datetime:
    """A time the server stores and computes with: aware (UTC when the archive gave none),
    from `EARLIEST` to a day from now."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if not EARLIEST <= value <= timezone.now() + CLOCK_SKEW:
        raise ValueError(f"{value.isoformat()} is before {EARLIEST.year} or in the future")
    return value


Instant = Annotated[datetime, AfterValidator(_bounded)]


class _Strict(BaseModel):
    # New optional fields may come in later versions of the format; unknown ones are ignored.
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class ProvenanceIn(_Strict):
    source: str = Field(max_length=16)
    absorbed: bool = False
    author: str = Field("", max_length=150)
    client: str = Field("", max_length=120)
    conversation: str = Field("", max_length=200)
    path: str = Field("", max_length=1000)
    chunk_hash: str = Field("", max_length=128)
    verbatim: str = ""
    written_text: str = ""
    created: Instant


class VersionIn(_Strict):
    number: int = Field(ge=1, le=INT4)
    kind: str = Field(max_length=32)
    content: str
    original: str = ""
    language: str = Field("", max_length=8)
    created: Instant


class AuthorIn(_Strict):
    kind: str = Field(max_length=16)
    client: str = Field("", max_length=120)
    user: str | None = Field(None, max_length=150)


class ForgottenIn(_Strict):
    at: Instant
    reason: str = ""


class PeriodIn(_Strict):
    start: Instant = Field(alias="from")
    until: Instant | None = None
    started: str = Field(pattern="^(created|restored)$")
    ended: str = Field("", pattern="^(|forgotten|superseded)$")
    replaced_by: str | None = Field(None, pattern=MEMORY_ID.pattern)


class LinkIn(_Strict):
    """A typed link the memory makes. Who made it is the importer's (authority comes from the
    credential), so the archive's author of a link is not read."""

    type: str = Field(pattern=f"^({'|'.join(LinkType.values)})$")
    to: str = Field(pattern=MEMORY_ID.pattern)
    created: Instant
    removed: Instant | None = None


class MemoryIn(_Strict):
    id: str = Field(pattern=MEMORY_ID.pattern)
    kind: str = Field(max_length=32)
    state: str = Field(pattern="^(valid|forgotten|superseded)$")
    author: AuthorIn
    created: Instant
    updated: Instant
    language: str = Field("", max_length=8)
    translation: str = Field(max_length=16)
    original: str = ""
    forgotten: ForgottenIn | None = None
    restored: Instant | None = None
    superseded_by: str | None = Field(None, pattern=MEMORY_ID.pattern)
    superseded_at: Instant | None = None
    provenance: list[ProvenanceIn] = []
    versions: list[VersionIn] = []
    validity: list[PeriodIn] = []  # absent in archives written before validity was kept
    links: list[LinkIn] = []  # absent in archives without typed links
    entities: list[MentionIn] = []  # absent in archives written before entities were kept
    content: str = ""  # the body, set by the reader
    path: str = ""  # the file it came from, set by the reader


class MentionIn(_Strict):
    name: str = Field(max_length=200)
    kind: str = Field("", max_length=16)
    source: str = Field("", max_length=16)
    surface: str = Field("", max_length=200)


class EntityIn(_Strict):
    scope: str = Field("", max_length=40)
    name: str = Field(max_length=200)
    kind: str = Field("", max_length=16)
    aliases: list[Annotated[str, Field(max_length=200)]] = Field([], max_length=1000)
    merged_into: str | None = Field(None, max_length=200)


class ActionIn(_Strict):
    resolution: str = Field(max_length=16)
    automatic: bool = False
    surface: str = Field("", max_length=16)
    retired: str | None = Field(None, pattern=MEMORY_ID.pattern)
    kept: str | None = Field(None, pattern=MEMORY_ID.pattern)
    created: Instant
    undone_at: Instant | None = None


class ConflictIn(_Strict):
    id: str = Field(pattern=CONFLICT_ID.pattern)
    memory_a: str = Field(pattern=MEMORY_ID.pattern)
    memory_b: str | None = Field(None, pattern=MEMORY_ID.pattern)
    similarity: float | None = Field(None, ge=-1, le=1)
    status: str = Field(max_length=16)
    verdict: str = Field("", max_length=16)
    confidence: float | None = Field(None, ge=0, le=1)
    rationale: str = ""
    resolution: str = Field("", max_length=16)
    resolved_automatically: bool = False
    resolved_at: Instant | None = None
    created: Instant
    judged: Instant | None = None
    actions: list[ActionIn] = []


class Archive(BaseModel):
    """What a valid archive holds, parsed: its manifest, memories and queue items."""

    manifest: dict[str, Any]
    memories: list[MemoryIn]
    conflicts: list[ConflictIn]
    entities: list[EntityIn] = []
