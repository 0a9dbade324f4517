"""Import of an export: the periods each memory was valid, so `as_of` answers the same after a
move (see `memories.portability.archive_import`)."""

from __future__ import annotations

from memories.models import Memory, ValidityPeriod
from memories.portability.incoming import MemoryIn


def write_validity(fresh: list[MemoryIn], created: dict[str, Memory]) -> None:
    """The periods each imported memory was valid, as exported (an archive from before validity
    was kept: one period from its creation to its forgetting or supersession, if any)."""
    periods = []
    bounded = []
    for item in fresh:
        row = created[item.id]
        if not getattr(row, "imported", False):
            continue
        spans = [(p.start, p.until, p.started, p.ended, p.replaced_by) for p in item.validity]
        if not item.validity and item.state != "valid":
            ended = "forgotten" if item.forgotten is not None else "superseded"
            until = item.forgotten.at if item.forgotten is not None else item.superseded_at
            spans = [(item.created, until or item.updated, "created", ended, item.superseded_by)]
        elif not item.validity:
            spans = [(item.created, None, "created", "", None)]
        for start, until, started, ended, replaced_by in spans:
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
        row.valid_from, row.valid_until = spans[0][0], spans[-1][1]
        row.validity_gaps = len(spans) > 1
        bounded.append(row)
    ValidityPeriod.objects.bulk_create(periods, batch_size=1000)
    Memory.objects.bulk_update(
        bounded, ["valid_from", "valid_until", "validity_gaps"], batch_size=1000
    )
