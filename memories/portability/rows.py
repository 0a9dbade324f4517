"""The rows an export reads: a scope's memories of one kind and section, a page at a time.

A page is `PAGE` memories by keyset on their id (never the whole scope at once), read as
tuples, with one query per related table for the whole page: provenance, versions, validity
periods, the memories each one supersedes, the open review-queue items it is in, and the typed
links it makes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from memories.models import (
    Conflict,
    ConflictStatus,
    EntityMention,
    Memory,
    MemoryLink,
    MemoryVersion,
    Provenance,
    ValidityPeriod,
)
from memories.portability.fields import (
    LINK_COLUMNS,
    MEMORY_COLUMNS,
    MENTION_COLUMNS,
    PERIOD_COLUMNS,
    PROVENANCE_COLUMNS,
    VERSION_COLUMNS,
    Related,
    link_fields,
    memory_fields,
    mention_fields,
    period_fields,
    provenance_fields,
    version_fields,
)
from scopes.models import Scope

PAGE = 2000


def _among(ids: list[int]) -> RawSQL:
    """The page's memory ids as one array parameter: `IN (%s, %s, …)` with 2,000 of them cost
    more to build and parse than the query takes to run."""
    return RawSQL("SELECT unnest(%s::bigint[])", (ids,))


def _grouped(
    rows: QuerySet, columns: tuple[str, ...], fields: Callable[[tuple], dict[str, Any]]
) -> dict[int, list[dict[str, Any]]]:
    """Rows of a related table by memory (the first column, which the query orders by first)."""
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows.values_list(*columns):
        found[row[0]].append(fields(row))
    return found


def _disputes(ids: list[int]) -> dict[int, list[str]]:
    """The open queue items each memory is in (its dispute marks)."""
    marks: dict[int, list[str]] = defaultdict(list)
    rows = Conflict.objects.filter(status=ConflictStatus.OPEN).filter(
        Q(memory_a_id__in=_among(ids)) | Q(memory_b_id__in=_among(ids))
    )
    for public_id, a, b in rows.values_list("public_id", "memory_a_id", "memory_b_id"):
        for memory_id in {a, b} - {None}:
            marks[memory_id].append(public_id)
    return {memory_id: sorted(found) for memory_id, found in marks.items()}


def _related(ids: list[int]) -> Iterator[tuple[int, Related]]:
    page = _among(ids)
    provenance = _grouped(
        Provenance.objects.filter(memory_id__in=page).order_by("memory_id", "created_at", "id"),
        PROVENANCE_COLUMNS,
        provenance_fields,
    )
    versions = _grouped(
        MemoryVersion.objects.filter(memory_id__in=page).order_by("memory_id", "number"),
        VERSION_COLUMNS,
        version_fields,
    )
    periods = _grouped(
        ValidityPeriod.objects.filter(memory_id__in=page).order_by("memory_id", "valid_from", "id"),
        PERIOD_COLUMNS,
        period_fields,
    )
    typed_links = _grouped(
        MemoryLink.objects.filter(source_id__in=page).order_by("source_id", "created_at", "id"),
        LINK_COLUMNS,
        link_fields,
    )
    supersedes: dict[int, list[str]] = defaultdict(list)
    later = Memory.objects.filter(superseded_by_id__in=page)
    for newer, public_id in later.values_list("superseded_by_id", "public_id"):
        supersedes[newer].append(public_id)
    mentions = _grouped(
        EntityMention.objects.filter(memory_id__in=page).order_by(
            "memory_id", "entity__name", "source", "id"
        ),
        MENTION_COLUMNS,
        mention_fields,
    )
    disputes = _disputes(ids)
    for memory_id in ids:
        yield (
            memory_id,
            Related(
                provenance=provenance.get(memory_id, []),
                versions=versions.get(memory_id, []),
                validity=periods.get(memory_id, []),
                supersedes=sorted(supersedes.get(memory_id, [])),
                disputed=disputes.get(memory_id, []),
                links=typed_links.get(memory_id, []),
                entities=mentions.get(memory_id, []),
            ),
        )


def memory_rows(*, scope: Scope, kind: str, live: bool) -> Iterator[tuple[str, dict, str]]:
    """(id, front matter, content) of the scope's memories of this kind and section, by id.
    Ids are a fixed prefix and 26 lowercase letters and digits, so the database orders them
    as the zip does."""
    rows = Memory.objects.filter(scope=scope, kind_id=kind, valid=live).order_by("public_id")
    last = ""
    while True:
        page = list(rows.filter(public_id__gt=last).values_list(*MEMORY_COLUMNS)[:PAGE])
        if not page:
            return
        related = dict(_related([row[0] for row in page]))
        for row in page:
            fields = memory_fields(row, scope_id=scope.public_id, related=related[row[0]])
            yield row[1], fields, row[3]
        last = page[-1][1]
