"""Import of an export: the periods each memory was valid, so `as_of` answers the same after a
move (see `memories.portability.archive_import`)."""

from __future__ import annotations

from datetime import datetime

from memories.models import Memory, ValidityPeriod
from memories.portability.incoming import MemoryIn

# (start, until, how it started, how it ended, the archive id of what replaced it)
Span = tuple[datetime, datetime | None, str, str, str | None]


def validity_spans(item: MemoryIn) -> list[Span]:
    """The periods an archive's memory was valid, as exported (an archive from before validity
    was kept: one period from its creation to its forgetting or supersession, if any)."""
    if item.validity:
        return [(p.start, p.until, p.started, p.ended, p.replaced_by) for p in item.validity]
    if item.state != "valid":
        ended = "forgotten" if item.forgotten is not None else "superseded"
        until = item.forgotten.at if item.forgotten is not None else item.superseded_at
        return [(item.created, until or item.updated, "created", ended, item.superseded_by)]
    return [(item.created, None, "created", "", None)]


def validity_bounds(memory: Memory, item: MemoryIn) -> None:
    """The memory's outer validity bounds (which make it valid or not) from its periods."""
    spans = validity_spans(item)
    memory.valid_from, memory.valid_until = spans[0][0], spans[-1][1]
    memory.validity_gaps = len(spans) > 1


def write_validity(fresh: list[MemoryIn], created: dict[str, Memory]) -> None:
    """The period rows of each memory this import wrote (its bounds were set with its row)."""
    periods = []
    for item in fresh:
        row = created[item.id]
        if not getattr(row, "imported", False):
            continue
        for start, until, started, ended, replaced_by in validity_spans(item):
            replacing = created.get(replaced_by) if replaced_by else None
            periods.append(
                ValidityPeriod(
                    memory=row,
                    valid_from=start,
                    valid_until=until,
                    started=started,
                    ended=ended,
                    replaced_by=replacing,
                )
            )
    ValidityPeriod.objects.bulk_create(periods, batch_size=1000)
