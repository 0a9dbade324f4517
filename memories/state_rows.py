"""The provenance that moves between memories, shared by the write services, canonicalization
and hygiene, below all three; and the validity periods every change of a memory's state opens
or closes. What a memory derives from its text is `memories.canonical.content`'s."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from memories.models import Memory, Provenance, ValidityPeriod, ValidityStart


def move_provenance(*, source: Memory, target: Memory, written_text: str) -> list[list]:
    """Every provenance row of `source` joins `target`, marked absorbed, keeping what it said
    (`written_text` when the row recorded none). Returns `[id, absorbed, written_text]` of each
    row as it was, for `return_provenance` to undo the move."""
    moved = []
    for row in Provenance.objects.filter(memory=source):
        moved.append([row.id, row.absorbed, row.written_text])
        row.memory = target
        row.absorbed = True
        row.written_text = row.written_text or written_text
        row.save(update_fields=["memory", "absorbed", "written_text"])
    return moved


def return_provenance(*, moved: list[list], to: Memory) -> None:
    """Undo `move_provenance`: the rows go back to `to` as they were."""
    for row_id, absorbed, written_text in moved:
        Provenance.objects.filter(pk=row_id).update(
            memory=to, absorbed=absorbed, written_text=written_text
        )


# The memory's own columns the validity helpers change, for the callers' `update_fields`. They
# make `Memory.valid` (a generated column), which Django does not read back after an UPDATE:
# `validity_saved` saves them and reads it.
VALIDITY_FIELDS = ["valid_from", "valid_until", "validity_gaps"]


def validity_saved(memory: Memory, *, update_fields: list[str]) -> None:
    """Save the memory's validity bounds (and `update_fields`), then read back whether it is
    valid now, as PostgreSQL derived it from them."""
    memory.save(update_fields=[*update_fields, "updated_at", *VALIDITY_FIELDS])
    memory.refresh_from_db(fields=["valid"])


def validity_open(*, memory: Memory, at: datetime, by: Any, started: str) -> None:
    """A new validity period from `at` (a write or a restore); the caller saves VALIDITY_FIELDS."""
    memory.validity_gaps = memory.valid_from is not None
    if memory.valid_from is None:
        memory.valid_from = at
    memory.valid_until = None
    ValidityPeriod.objects.create(memory=memory, valid_from=at, started=started, started_by=by)


def validity_close(
    *, memory: Memory, at: datetime, by: Any, ended: str, replaced_by: Memory | None = None
) -> None:
    """The open validity period ends at `at` (forget, or supersede and merge by `replaced_by`);
    the caller saves VALIDITY_FIELDS."""
    memory.valid_until = at
    ValidityPeriod.objects.filter(memory=memory, valid_until__isnull=True).update(
        valid_until=at, ended=ended, ended_by=by, replaced_by=replaced_by
    )


def new_memory_state(*, held: bool) -> dict[str, Any]:
    """A new memory's state: valid from the instant it is created, or held back by capture
    (stored forgotten, never valid until an admin keeps it: no `valid_from`)."""
    now = timezone.now()
    return {
        "created_at": now,
        "valid_from": None if held else now,
        "forgotten_at": now if held else None,
    }


def validity_written(*, memories: list[Memory], by: Any) -> None:
    """The first validity period of newly written memories (a held one has none yet)."""
    ValidityPeriod.objects.bulk_create(validity_rows(memories=memories, by=by))


def validity_rows(*, memories: list[Memory], by: Any) -> list[ValidityPeriod]:
    """`validity_written`'s rows, for a caller that inserts them with its other rows."""
    return _first_periods([memory for memory in memories if memory.valid], by=by)


def validity_rows_new(*, memories: list[Memory], by: Any) -> list[ValidityPeriod]:
    """`validity_rows` of new memories not inserted yet, whose `valid` PostgreSQL derives only
    then: from the bounds it derives it from, valid from `valid_from` and not ended (a memory
    capture holds back has no `valid_from`, `new_memory_state`)."""
    return _first_periods(
        [m for m in memories if m.valid_from is not None and m.valid_until is None], by=by
    )


def _first_periods(memories: list[Memory], *, by: Any) -> list[ValidityPeriod]:
    return [
        ValidityPeriod(
            memory=memory,
            valid_from=memory.valid_from,
            started=ValidityStart.CREATED,
            started_by=by,
        )
        for memory in memories
    ]


def memories_confirmed(*, ids: set[int]) -> None:
    """A write said again what these memories say: they are confirmed now (not stale)."""
    if ids:
        Memory.objects.filter(pk__in=ids).update(confirmed_at=timezone.now())
