"""Import of another system's file into a scope: its records written through the archive import's
write path (`memories.portability.imported`), so they pass what every write passes.

Two passes over the file. The first reads it whole without writing, so a hostile or malformed
file (`BadSource`) is refused before anything is written, and counts its characters against a
request's budget. The second writes in batches of `BATCH` records, each batch in its own
transaction with its ledger rows (`ImportedMemory`, keyed by the system and the record's id):
an import that stops (a crash, ^C) leaves whole batches, and the same import run again skips
what is in and goes on. A second import of the same file writes nothing.

Each record is held to what `remember` holds a write to: its text cleaned and within the
length, no secret in it or in what the source said of it (the content guard refuses the
record, the import goes on), its language detected (text that is not English is queued for
canonicalization, the original kept), its text deduplicated in the scope (a text the scope
holds, or an earlier record of the file holds, is absorbed: its provenance joins that memory).
Who wrote it comes from the credential; the source's ids, users, times and metadata are kept as
claims on the import's provenance row. Validity comes from the source where it has it
(`valid_from`/`valid_until`): a record valid until a time is stored forgotten at that time, the
reason saying so.
Relations between records become typed links (the source's word mapped by `LINK_TYPES`, an
unknown one `relates_to`); a relation whose target is not in the file stays in the claims.
A dry run reads the file the same way and reports what each record would become.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.canonical.content import clean_content, content_hash
from memories.entities.given import MAX_GIVEN_ENTITIES, GivenEntity, given_leniently
from memories.entities.mentions import MentionWrite, mentions_written
from memories.models import (
    ImportedMemory,
    LinkType,
    Memory,
    MemoryKind,
    MemoryLink,
    MentionSource,
    authenticated_author_kind,
)
from memories.portability import format as fmt
from memories.portability.guard import MAX_LINKS, refuse_unstorable
from memories.portability.imported import (
    MemoryWrite,
    held_by_text,
    prepare_writes,
    write_memories,
)
from memories.portability.incoming import EARLIEST, AuthorIn, ForgottenIn, MemoryIn, PeriodIn
from memories.portability.periods import write_validity
from memories.portability.sources.records import (
    BadSource,
    SkippedRecord,
    SourceRecord,
)
from memories.portability.sources.registry import READERS, Reader, SourceInput
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError
from zeromemory.core.secrets import redact_secrets, refuse_secrets

BATCH = 256  # records per transaction (their embeddings are computed in one call of the model)
REPORT_ROWS = 1000  # per-record lines a report lists (its counts cover every record)
# What one record's provenance claims may hold: a source's data shared by many records (a note's
# metadata, a document, an edge's episodes) is not copied without bound into each of them.
MAX_CLAIMS_CHARS = 64 * 1024  # the claims serialized as JSON
MAX_TAGS = MAX_GIVEN_ENTITIES

# The source's word for a relation → our link type; any other word relates_to (docs/import.md).
LINK_TYPES: dict[str, str] = {
    "relates_to": LinkType.RELATES_TO,
    "related_to": LinkType.RELATES_TO,
    "relates to": LinkType.RELATES_TO,
    "see_also": LinkType.RELATES_TO,
    "depends_on": LinkType.DEPENDS_ON,
    "depends on": LinkType.DEPENDS_ON,
    "requires": LinkType.DEPENDS_ON,
    "uses": LinkType.DEPENDS_ON,
    "needs": LinkType.DEPENDS_ON,
    "caused_by": LinkType.CAUSED_BY,
    "caused by": LinkType.CAUSED_BY,
    "because_of": LinkType.CAUSED_BY,
    "result_of": LinkType.CAUSED_BY,
    "example_of": LinkType.EXAMPLE_OF,
    "example of": LinkType.EXAMPLE_OF,
    "instance_of": LinkType.EXAMPLE_OF,
    "implements": LinkType.EXAMPLE_OF,
    "part_of": LinkType.EXAMPLE_OF,
    "derives": LinkType.CAUSED_BY,  # supermemory: inferred from the other memory
    "derived_from": LinkType.CAUSED_BY,
    "extends": LinkType.RELATES_TO,
    "updates": LinkType.RELATES_TO,
}

WRITE, ABSORB, REFUSE, SKIP, ALREADY = "write", "absorb", "refuse", "skip", "already"


def link_type_of(word: str) -> str:
    key = word.strip().lower().replace("-", "_")
    return LINK_TYPES.get(key) or LINK_TYPES.get(key.replace("_", " ")) or LinkType.RELATES_TO


@dataclass(frozen=True)
class RecordOutcome:
    source_id: str
    outcome: str  # write, absorb, refuse, skip, already
    reason: str = ""


@dataclass
class SourceImportReport:
    system: str
    dry_run: bool
    records: int = 0  # records the file holds (skipped ones too)
    written: int = 0  # new memories (would be, in a dry run)
    absorbed: int = 0  # texts the scope (or an earlier record of the file) held
    refused: int = 0  # by the content guard (secrets)
    skipped: int = 0  # not importable (empty, too long, not a memory), with a reason
    already: int = 0  # written by an earlier import of this file
    links: int = 0  # typed links written
    outcomes: list[RecordOutcome] = field(default_factory=list)  # the first REPORT_ROWS
    truncated: bool = False  # more outcomes than listed

    def note(self, outcome: RecordOutcome) -> None:
        setattr(self, _COUNTERS[outcome.outcome], getattr(self, _COUNTERS[outcome.outcome]) + 1)
        if len(self.outcomes) < REPORT_ROWS:
            # An id is the file's text too: one holding a secret is not answered back.
            shown, _found = redact_secrets(outcome.source_id)
            self.outcomes.append(replace(outcome, source_id=shown))
        else:
            self.truncated = True


_COUNTERS = {
    WRITE: "written",
    ABSORB: "absorbed",
    REFUSE: "refused",
    SKIP: "skipped",
    ALREADY: "already",
}


def origin_id(system: str, source_id: str) -> str:
    """The ledger key of a record: its system and id, within the ledger's 40 characters."""
    digest = hashlib.sha256(f"{system}\0{source_id}".encode()).hexdigest()[:32]
    return f"{system[:6]}:{digest}"


def _reader(system: str) -> Reader:
    reader = READERS.get(system)
    if reader is None:
        raise BadSource(
            "system",
            _("Unknown system %(system)s; one of %(systems)s.")
            % {"system": system, "systems": ", ".join(sorted(READERS))},
        )
    return reader


def claims_size(record: SourceRecord) -> int:
    """The characters of the record's claims as its provenance row stores them (JSON)."""
    return len(json.dumps(_claims(record), ensure_ascii=False, default=str))


def _over_limits(record: SourceRecord) -> str:
    """Why the record is too large to import (\"\" when it is not): the archive path's limits
    on links, entities and tags, and MAX_CLAIMS_CHARS on what its provenance keeps."""
    if len(record.relations) > MAX_LINKS:
        return _("More than %(n)d relations.") % {"n": MAX_LINKS}
    if len(record.entities) > MAX_GIVEN_ENTITIES:
        return _("More than %(n)d entities.") % {"n": MAX_GIVEN_ENTITIES}
    if len(record.tags) > MAX_TAGS:
        return _("More than %(n)d tags.") % {"n": MAX_TAGS}
    if claims_size(record) > MAX_CLAIMS_CHARS:
        return _("What the source says of it (ids, metadata, history) passes %(n)d characters.") % {
            "n": MAX_CLAIMS_CHARS
        }
    return ""


def _unstorable_record(record: SourceRecord) -> bool:
    """Whether any text of the record (its id, text, tags, entities, relations, what the source
    said of it, keys too) holds what PostgreSQL cannot store: a NUL or a lone surrogate."""
    fields = {
        "id": record.source_id,
        "content": record.content,
        "kind": record.kind,
        "tags": list(record.tags),
        "entities": [[e.name, e.kind] for e in record.entities],
        "relations": [[r.type, r.target] for r in record.relations],
        "attributes": record.attributes,
    }
    try:
        # The archive's check: every string of a parsed file, the keys of objects too.
        refuse_unstorable(fields)
    except ValueError:
        return True
    return False


def _records(
    system: str, source: SourceInput, max_total: int | None = None
) -> Iterator[SourceRecord | SkippedRecord]:
    if not isinstance(source, Path):
        source.seek(0)
    try:
        for record in _reader(system)(source, max_total):
            if isinstance(record, SourceRecord) and _unstorable_record(record):
                raise BadSource("body", _("A record holds a NUL character or a lone surrogate."))
            if isinstance(record, SourceRecord) and (why := _over_limits(record)):
                yield SkippedRecord(record.system, record.source_id, why)
                continue
            yield record
    except (UnicodeDecodeError, RecursionError) as exc:
        raise BadSource("body", _("The file cannot be read: %(e)s") % {"e": exc}) from None


def source_checked(
    *,
    system: str,
    source: SourceInput,
    budget: int | None = None,
    max_total: int | None = None,
) -> int:
    """Read the whole file without writing: BadSource if it is not what `system` writes or is
    hostile, or if its text passes `budget` characters (a request's); the records it holds.
    `max_total`: the most bytes a zipped folder's files may hold (a request's limit)."""
    count = characters = 0
    keys: set[bytes] = set()  # the records' ledger keys, as short digests (bounded memory)
    for record in _records(system, source, max_total):
        count += 1
        if isinstance(record, SourceRecord):
            key = hashlib.sha256(origin_id(system, record.source_id).encode()).digest()[:16]
            if key in keys:
                # Two records under one ledger key would collide in one batch (a 500) or be
                # lost across batches (the second read as already imported).
                shown, _found = redact_secrets(record.source_id[:200])
                raise BadSource(
                    "body", _("The record %(id)s appears twice in the file.") % {"id": shown}
                )
            keys.add(key)
            # The claims are stored too: they count against the budget as the text does.
            characters += len(record.content) + claims_size(record)
    if budget is not None and characters > budget:
        raise BadSource(
            "body",
            _(
                "The file holds more than %(n)d characters of memories, more than one request "
                "embeds: split it, or import it with manage.py import_from."
            )
            % {"n": budget},
        )
    return count


def _bounded(value: datetime | None, now: datetime) -> datetime | None:
    """A source's time as this server stores it: aware, not before EARLIEST, not after now."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return min(max(value, EARLIEST), now)


def _flat_texts(value: Any, label: str, into: dict[str, str | None]) -> None:
    """Every string of `value`, the keys of its objects too, under `label` (a fixed name this
    code gives: the file's keys never name a field, so a refusal does not repeat them)."""
    if isinstance(value, str):
        into[f"{label}#{len(into)}"] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            _flat_texts(str(key), label, into)
            _flat_texts(item, label, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _flat_texts(item, label, into)


def _claims(record: SourceRecord) -> dict[str, Any]:
    """What the source said of the record that this server does not take as its own."""
    claims: dict[str, Any] = {"system": record.system, "id": record.source_id}
    for name in ("created_at", "updated_at", "valid_from", "valid_until"):
        if (value := getattr(record, name)) is not None:
            claims[name] = fmt.when(value)
    if record.tags:
        claims["tags"] = list(record.tags)
    if record.entities:
        claims["entities"] = [{"name": e.name, "kind": e.kind} for e in record.entities]
    if record.relations:
        claims["relations"] = [
            {"type": r.type, "target": r.target, "target_is_record": r.target_is_record}
            for r in record.relations
        ]
    if record.attributes:
        claims["attributes"] = record.attributes
    return claims


@dataclass
class _Held:
    """A record ready to write: what the archive path takes, and what links and entities need."""

    record: SourceRecord
    write: MemoryWrite


def _held(record: SourceRecord, *, kinds: set[str], now: datetime) -> _Held | RecordOutcome:
    """The record as a write, or the outcome that keeps it out (the content guard's refusal)."""
    try:
        content = clean_content(record.content)
    except DomainError as exc:
        return RecordOutcome(record.source_id, SKIP, exc.message)
    claims = _claims(record)
    texts: dict[str, str | None] = {"content": content}
    for name, claim in claims.items():
        if name != "system":
            _flat_texts(claim, f"source.{name}", texts)
    try:
        refuse_secrets(texts)
    except DomainError as exc:
        where = getattr(exc, "field", "").split("#")[0]
        return RecordOutcome(record.source_id, REFUSE, f"{where}: {exc.message}")
    start = _bounded(record.valid_from or record.created_at, now) or now
    # An end the source puts in the future has not come: the memory is valid now (the
    # source's time stays in the claims).
    later = record.valid_until is not None and _bounded(record.valid_until, now) >= now
    until = None if later else _bounded(record.valid_until, now)
    if until is not None and until <= start:
        start = until
    item = MemoryIn.model_construct(
        id=origin_id(record.system, record.source_id),
        kind=record.kind if record.kind in kinds else "fact",
        state="valid" if until is None else "forgotten",
        author=AuthorIn.model_construct(kind="import", client=record.system, user=None),
        created=now,
        updated=now,
        language="",
        translation="",
        original="",
        # A record the source holds valid until a time: ended then, saying why (the source
        # rarely names what replaced it, so it is not a supersession here).
        forgotten=None
        if until is None
        else ForgottenIn.model_construct(
            at=until,
            reason=_("No longer valid in %(system)s since %(at)s.")
            % {"system": record.system, "at": fmt.when(until)},
        ),
        restored=None,
        superseded_by=None,
        superseded_at=None,
        provenance=[],
        versions=[],
        validity=[
            PeriodIn.model_construct(
                start=start,
                until=until,
                started="created",
                ended="forgotten" if until is not None else "",
                replaced_by=None,
            )
        ],
        links=[],
        entities=[],
        content=content,
        path="",
    )
    return _Held(record, MemoryWrite(item=item, claimed=item, claims=claims))


def _ledger(scope: Scope, ids: list[str]) -> dict[str, Memory]:
    return {
        row.origin_id: row.memory
        for row in ImportedMemory.objects.filter(scope=scope, origin_id__in=ids).select_related(
            "memory"
        )
    }


def _given(record: SourceRecord) -> tuple[GivenEntity, ...]:
    """The record's entities (and the entities its relations name) as a writer's."""
    names = [{"name": e.name, "kind": e.kind or None} for e in record.entities]
    names += [{"name": r.target} for r in record.relations if not r.target_is_record]
    return given_leniently(names)


@dataclass
class _Links:
    """Relations waiting for their target: one later in the file than its source."""

    pending: list[tuple[str, str, str]] = field(default_factory=list)  # (from, type, to) ids


def _link_rows(
    actor: Actor, scope: Scope, pairs: list[tuple[Memory, Memory, str]]
) -> list[MemoryLink]:
    return [
        MemoryLink(
            scope=scope,
            source=source,
            target=target,
            link_type=link_type,
            author_kind=authenticated_author_kind(actor),
            agent_name=actor.client_name[:120],
            created_by=actor.user,
            created_by_token=actor.token,
        )
        for source, target, link_type in pairs
        if source.pk != target.pk
    ]


def _write_links(
    actor: Actor, scope: Scope, wanted: list[tuple[str, str, str]], links: _Links
) -> int:
    """The typed links whose two ends are in the ledger now; the others wait for their target
    (a target never imported stays in the source memory's claims)."""
    if not wanted:
        return 0
    ends = _ledger(scope, [i for pair in wanted for i in (pair[0], pair[2])])
    pairs = []
    for source_id, link_type, target_id in wanted:
        if source_id in ends and target_id in ends:
            pairs.append((ends[source_id], ends[target_id], link_type))
        else:
            links.pending.append((source_id, link_type, target_id))
    rows = _link_rows(actor, scope, pairs)
    # A link the scope holds already (an absorbed memory's, a re-run) stands as it is.
    MemoryLink.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def _prepare_batch(scope: Scope, batch: list[_Held], preparing: ThreadPoolExecutor) -> Future[None]:
    """The batch's language and embeddings, computed in the background (no query there) while
    the batch before it is written: the model and PostgreSQL work side by side. What an earlier
    run wrote and the texts the scope holds are not embedded (a resumed import skips fast)."""
    earlier = _ledger(scope, [h.write.item.id for h in batch])
    waiting = [h.write for h in batch if h.write.item.id not in earlier]
    return preparing.submit(prepare_writes, waiting, set(held_by_text(scope, waiting)))


def _write_batch(
    actor: Actor, scope: Scope, batch: list[_Held], report: SourceImportReport, links: _Links
) -> None:
    now = timezone.now()
    with transaction.atomic():
        # Two imports into one scope run one after the other, so the ledger check holds.
        Scope.objects.select_for_update().filter(pk=scope.pk).first()
        done = _ledger(scope, [h.write.item.id for h in batch])
        fresh = [h for h in batch if h.write.item.id not in done]
        for held in batch:
            if held.write.item.id in done:
                report.note(RecordOutcome(held.record.source_id, ALREADY))
        # The first record of a text is written; a later one of the same text (valid) is
        # absorbed into it, as a second remember of it would be.
        firsts: list[_Held] = []
        repeats: list[_Held] = []
        seen: set[str] = set()
        for held in fresh:
            key = content_hash(held.write.item.content)
            if held.write.item.state == "valid" and key in seen:
                repeats.append(held)
            else:
                seen.add(key)
                firsts.append(held)
        created: dict[str, Memory] = {}
        for group in (firsts, repeats):
            if group:
                made, _absorbed = write_memories(actor, scope, [h.write for h in group], now)
                created.update(made)
        items = [h.write.item for h in fresh]
        write_validity(items, created)
        mentions = []
        for held in fresh:
            memory = created[held.write.item.id]
            new = getattr(memory, "imported", False)
            report.note(RecordOutcome(held.record.source_id, WRITE if new else ABSORB))
            if new and held.write.derived:
                mentions.append(
                    MentionWrite(
                        memory=memory,
                        keys=held.write.derived.entity_keys,
                        found=held.write.derived.entities_found,
                    )
                )
            if new and (given := _given(held.record)):
                mentions.append(
                    MentionWrite(
                        memory=memory,
                        keys={},
                        found=[],
                        given=given,
                        given_source=MentionSource.IMPORT,
                    )
                )
        mentions_written(mentions, by=actor.user)
        ImportedMemory.objects.bulk_create(
            ImportedMemory(scope=scope, origin_id=item.id, memory=created[item.id])
            for item in items
        )
        wanted = [
            (
                h.write.item.id,
                link_type_of(relation.type),
                origin_id(h.record.system, relation.target),
            )
            for h in fresh
            if getattr(created[h.write.item.id], "imported", False)
            for relation in h.record.relations
            if relation.target_is_record
        ]
        report.links += _write_links(actor, scope, wanted, links)


def _dry_batch(
    scope: Scope, batch: list[_Held], report: SourceImportReport, seen: set[int]
) -> None:
    done = _ledger(scope, [h.write.item.id for h in batch])
    held = held_by_text(scope, [h.write for h in batch if h.write.item.id not in done])
    for item in batch:
        if item.write.item.id in done:
            report.note(RecordOutcome(item.record.source_id, ALREADY))
            continue
        key = content_hash(item.write.item.content)
        short = int(key[:16], 16)  # the file's texts so far, in little memory
        if item.write.item.state == "valid" and (key in held or short in seen):
            report.note(
                RecordOutcome(item.record.source_id, ABSORB, _("The scope holds this text."))
            )
            continue
        if item.write.item.state == "valid":
            seen.add(short)
        report.note(RecordOutcome(item.record.source_id, WRITE))


def source_import(
    *,
    actor: Actor,
    scope: Scope,
    system: str,
    source: SourceInput,
    dry_run: bool = False,
    budget: int | None = None,
    max_total: int | None = None,
    progress: Callable[[SourceImportReport], None] | None = None,
) -> SourceImportReport:
    """Import `system`'s file (an open seekable binary file, or a folder's path) into `scope`
    (which `actor` may write), or with `dry_run` report what it would do; BadSource before
    anything is written when the file is not what `system` writes. `budget`: the most
    characters one request may embed (None for the command); `max_total`, the most bytes a zipped
    folder may hold uncompressed (a request's `ZM_IMPORT_MAX_REQUEST_BYTES`; None for the
    command's `ZM_IMPORT_MAX_TOTAL_BYTES`). `progress` is called after each
    batch with the report so far."""
    report = SourceImportReport(system=system, dry_run=dry_run)
    source_checked(system=system, source=source, budget=budget, max_total=max_total)
    kinds = set(MemoryKind.objects.values_list("slug", flat=True))
    links = _Links()
    seen: set[int] = set()
    batch: list[_Held] = []

    # The slow part (language, embeddings) of a batch runs before its transaction, as the
    # archive import's does (the scope row is locked only to write), and beside the writing of
    # the batch before it.
    preparing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-prepare")
    ready: list[tuple[list[_Held], Future[None]]] = []

    def write_ready() -> None:
        written, prepared = ready.pop()
        prepared.result()
        _write_batch(actor, scope, written, report, links)
        if progress is not None:
            progress(report)

    def flush() -> None:
        if dry_run:
            _dry_batch(scope, batch, report, seen)
            if progress is not None:
                progress(report)
        else:
            prepared = _prepare_batch(scope, list(batch), preparing)
            if ready:
                write_ready()
            ready.append((list(batch), prepared))
        batch.clear()

    try:
        for record in _records(system, source, max_total):
            report.records += 1
            if isinstance(record, SkippedRecord):
                report.note(RecordOutcome(record.source_id, SKIP, record.reason))
                continue
            held = _held(record, kinds=kinds, now=timezone.now())
            if isinstance(held, RecordOutcome):
                report.note(held)
                continue
            batch.append(held)
            if len(batch) >= BATCH:
                flush()
        if batch:
            flush()
        if ready:
            write_ready()
    finally:
        preparing.shutdown(wait=True, cancel_futures=True)
    if links.pending and not dry_run:
        waiting, links.pending = links.pending, []
        with transaction.atomic():
            report.links += _write_links(actor, scope, waiting, _Links())
    return report
