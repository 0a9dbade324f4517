"""The answer of a memory's history (REST `GET /memories/{id}/history`, the MCP tool `history`,
the dashboard's timeline): its validity periods, the supersede chain both ways, the hygiene
merges with the provenance they moved, and one timeline of events, oldest first, each with its
time and author (a username; none for the server's own passes and hygiene's automatic rules).

Events: `written`; `confirmed` (a later write said the same and was absorbed); `edited` (the
version holds the text before the edit); `forgotten`, `superseded` (with the memory that
replaced it) and `restored`, from the validity periods; `replaced` (this memory superseded
`memory`); `merged` and `unmerged` (a hygiene merge into this memory, and its undo); `moved`
(forgotten by a move, with the memory it became) and `moved_here` or `shared_here` (this memory
arrived by a move or share, with the memory and scope it came from); `link_added` and
`link_removed` (a typed link this memory makes to `memory`, its type as the detail) and
`linked_here` and `unlinked_here` (a link another memory makes to this one).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from memories.schemas import (
    MemoryFields,
    MemoryLinkOut,
    ProvenanceOut,
    VersionOut,
    provenance_out,
    version_out,
)
from memories.selectors import MemoryHistory


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


class PeriodOut(BaseModel):
    valid_from: datetime
    valid_until: datetime | None
    started: str  # created or restored
    started_by: str | None
    ended: str  # forgotten, superseded, or "" while valid
    ended_by: str | None
    replaced_by: str | None


class LinkOut(BaseModel):
    """One supersession in the chain: `older` was replaced by `newer` at `at`."""

    older: str
    newer: str
    at: datetime | None
    by: str | None


class MergeOut(BaseModel):
    resolution: str
    kept: str | None
    retired: str | None
    automatic: bool
    by: str | None
    at: datetime
    undone_at: datetime | None
    undone_by: str | None
    provenance: list[ProvenanceOut]  # the rows the merge moved to the kept memory


class EventOut(BaseModel):
    at: datetime
    event: str
    by: str | None = None
    memory: str | None = None  # the other memory of a supersession or merge
    version: int | None = None
    content: str | None = None
    detail: str = ""


class HistoryOut(MemoryFields):
    id: str
    scope: str
    kind: str
    content: str
    state: str
    valid_from: datetime | None
    valid_until: datetime | None
    periods: list[PeriodOut]
    superseded_by: list[LinkOut]  # the chain forward: what replaced it, and what replaced that
    supersedes: list[LinkOut]  # the chain backward: what it replaced, nearest first
    merges: list[MergeOut]
    versions: list[VersionOut]
    links: list[MemoryLinkOut]  # typed links from or to it, removed ones too, oldest first
    events: list[EventOut]

    @classmethod
    def of(cls, history: MemoryHistory) -> HistoryOut:
        memory = history.memory
        merges = [
            _merge(action, history)
            for action in history.actions
            if action.resolution == "merge" or action.moved_provenance
        ]
        return super().of(
            memory,
            valid_from=memory.valid_from,
            valid_until=memory.valid_until,
            periods=[_period(period) for period in history.periods],
            superseded_by=[_link(row) for row in history.later],
            supersedes=[_link(row) for row in history.earlier],
            merges=merges,
            versions=[version_out(version) for version in memory.versions.all()],
            links=[MemoryLinkOut.of(link) for link in history.links],
            events=_events(history, merges),
        )


# The claim a move's or a share's provenance row carries (`memories.services.relocate`), and the
# event it is in the history of the memory it arrived as.
ARRIVALS = {"moved_from": "moved_here", "shared_from": "shared_here"}


def _arrival(row) -> tuple[str, dict] | None:
    """(event, {memory, scope} it came from) for the row a move or share wrote, else None."""
    claims = row.claims if isinstance(row.claims, dict) else {}
    for claim, event in ARRIVALS.items():
        if isinstance(claims.get(claim), dict):
            return event, claims[claim]
    return None


def _period(period) -> PeriodOut:
    return PeriodOut(
        valid_from=period.valid_from,
        valid_until=period.valid_until,
        started=period.started,
        started_by=_username(period.started_by),
        ended=period.ended,
        ended_by=_username(period.ended_by),
        replaced_by=period.replaced_by.public_id if period.replaced_by_id else None,
    )


def _link(row) -> LinkOut:
    return LinkOut(
        older=row.memory.public_id,
        newer=row.replaced_by.public_id,
        at=row.valid_until,
        by=_username(row.ended_by),
    )


def _merge(action, history: MemoryHistory) -> MergeOut:
    moved = [history.moved[row[0]] for row in action.moved_provenance if row[0] in history.moved]
    return MergeOut(
        resolution=action.resolution,
        kept=action.kept.public_id if action.kept_id else None,
        retired=action.retired.public_id if action.retired_id else None,
        automatic=action.automatic,
        by=_username(action.by),
        at=action.created_at,
        undone_at=action.undone_at,
        undone_by=_username(action.undone_by),
        provenance=[provenance_out(row) for row in moved],
    )


def _events(history: MemoryHistory, merges: list[MergeOut]) -> list[EventOut]:
    memory = history.memory
    events = [
        EventOut(
            at=memory.created_at,
            event="written",
            by=_username(memory.created_by) or memory.agent_name or None,
            content=None,
            detail=memory.author_kind,
        )
    ]
    events += [
        EventOut(at=row.created_at, event="confirmed", by=_username(row.created_by) or None)
        for row in memory.provenance.all()
        if row.absorbed and row.id not in history.moved and not _arrival(row)
    ]
    for row in memory.provenance.all():
        if (arrival := _arrival(row)) is not None:
            event, origin = arrival
            events.append(
                EventOut(
                    at=row.created_at,
                    event=event,
                    by=_username(row.created_by) or None,
                    memory=origin.get("memory"),
                    detail=origin.get("scope", ""),
                )
            )
    events += [
        EventOut(
            at=version.created_at,
            event="edited",
            by=_username(version.edited_by),
            version=version.number,
            content=version.content,
        )
        for version in memory.versions.all()
    ]
    for period in history.periods:
        if period.started == "restored":
            events.append(
                EventOut(at=period.valid_from, event="restored", by=_username(period.started_by))
            )
        if period.valid_until is not None:
            moved = period.ended == "forgotten" and period.replaced_by_id
            events.append(
                EventOut(
                    at=period.valid_until,
                    event="moved" if moved else period.ended or "forgotten",
                    by=_username(period.ended_by),
                    memory=period.replaced_by.public_id if period.replaced_by_id else None,
                )
            )
    events += [
        EventOut(at=row.valid_until, event="replaced", by=_username(row.ended_by), memory=older)
        for row in history.earlier
        if row.replaced_by_id == memory.pk
        and row.valid_until
        and row.ended != "forgotten"  # a move: its `moved_here` event says so
        and (older := row.memory.public_id)
    ]
    for merge in merges:
        if merge.kept != memory.public_id:
            continue
        events.append(EventOut(at=merge.at, event="merged", by=merge.by, memory=merge.retired))
        if merge.undone_at:
            events.append(
                EventOut(
                    at=merge.undone_at, event="unmerged", by=merge.undone_by, memory=merge.retired
                )
            )
    events += _link_events(history)
    return sorted(events, key=lambda event: event.at)


def _link_events(history: MemoryHistory) -> list[EventOut]:
    """A typed link's making and taking back, seen from either end."""
    events = []
    for link in history.links:
        outgoing = link.source_id == history.memory.pk
        other = link.target if outgoing else link.source
        events.append(
            EventOut(
                at=link.created_at,
                event="link_added" if outgoing else "linked_here",
                by=_username(link.created_by) or link.agent_name or None,
                memory=other.public_id,
                detail=link.link_type,
            )
        )
        if link.removed_at is not None:
            events.append(
                EventOut(
                    at=link.removed_at,
                    event="link_removed" if outgoing else "unlinked_here",
                    by=_username(link.removed_by),
                    memory=other.public_id,
                    detail=link.link_type,
                )
            )
    return events
