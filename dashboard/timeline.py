"""The memory page's timeline: the history's events with a label in the reader's language."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from memories.models import LinkType
from memories.timeline import EventOut, HistoryOut

LABELS = {
    "written": _("Written"),
    "confirmed": _("Confirmed by a write saying the same"),
    "edited": _("Edited"),
    "forgotten": _("Forgotten"),
    "superseded": _("Superseded"),
    "restored": _("Restored"),
    "replaced": _("Replaced an earlier memory"),
    "merged": _("Merged a duplicate into this one"),
    "unmerged": _("Merge undone"),
    "moved": _("Moved to another scope"),
    "moved_here": _("Moved here from another scope"),
    "shared_here": _("Shared here from another scope"),
    "link_added": _("Linked to another memory"),
    "link_removed": _("Link removed"),
    "linked_here": _("Linked from another memory"),
    "unlinked_here": _("Link from another memory removed"),
}


# The events of a typed link, whose detail is the link's type.
LINK_EVENTS = {"link_added", "link_removed", "linked_here", "unlinked_here"}


@dataclass(frozen=True)
class TimelineRow:
    event: EventOut
    label: str
    note: str = ""  # a link event's type, in the reader's language


def timeline_rows(history: HistoryOut) -> list[TimelineRow]:
    """Newest first, as the page reads."""
    return [
        TimelineRow(
            event=event,
            label=str(LABELS.get(event.event, event.event)),
            note=str(LinkType(event.detail).label) if event.event in LINK_EVENTS else "",
        )
        for event in reversed(history.events)
    ]
