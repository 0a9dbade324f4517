"""A JSON file of another system, read as a stream of the objects at given places (`ijson`), so
a file of a million records is read in bounded memory; and the checks every reader shares
(nesting depth, UTF-8, what a file that is not the system's looks like, times)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any

import ijson
from django.utils.translation import gettext as _

from memories.portability.sources.records import BadSource

MAX_DEPTH = 64  # deeper than any system's file nests; a deeper one is hostile
MAX_ID_CHARS = 500


def not_the_system(system: str, why: str) -> BadSource:
    return BadSource(
        "body",
        _("This is not a file %(system)s writes: %(why)s") % {"system": system, "why": why},
    )


def json_items(
    source: IO[bytes], *, system: str, places: set[str], keys: set[str] | None = None
) -> Iterator[tuple[str, Any]]:
    """The objects at `places` (ijson prefixes such as "results.item" or "item"), in file
    order, each with its place. `keys`, when given, is filled with the top-level object's keys
    (empty for a top-level list) as the parse meets them. BadSource when the file is not JSON,
    not UTF-8 or nested deeper than MAX_DEPTH."""
    depth = 0
    builder: ijson.ObjectBuilder | None = None
    place = ""
    try:
        for prefix, event, value in ijson.parse(source, use_float=True):
            if event in ("start_map", "start_array"):
                depth += 1
                if depth > MAX_DEPTH:
                    raise BadSource(
                        "body", _("The file nests deeper than %(n)d levels.") % {"n": MAX_DEPTH}
                    )
            elif event in ("end_map", "end_array"):
                depth -= 1
            if builder is None:
                if keys is not None and event == "map_key" and prefix == "":
                    keys.add(value)
                if prefix in places and event in ("start_map", "start_array", "string", "number"):
                    place = prefix
                    builder = ijson.ObjectBuilder()
                else:
                    continue
            builder.event(event, value)
            if prefix == place and event not in ("map_key", "start_map", "start_array"):
                yield place, builder.value
                builder = None
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        # yajl quotes the file's bytes around the error on its next lines: only the first line,
        # what the error is, is answered (the file's text is not repeated back).
        reason = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise BadSource(
            "body", _("The file is not valid JSON in UTF-8: %(e)s") % {"e": reason}
        ) from None


def first_byte(source: IO[bytes]) -> bytes:
    """The first byte that is not white space (b"" for an empty file); the file rewound.
    BadSource for a folder: this system writes a file."""
    if not hasattr(source, "seek"):
        raise BadSource("body", _("This system writes a JSON file, not a folder."))
    source.seek(0)
    head = source.read(4096).lstrip(b" \t\r\n\xef\xbb\xbf")
    source.seek(0)
    return head[:1]


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def identifier(value: Any) -> str | None:
    """A record's id as the ledger keys it (a string or an integer), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | str) and 0 < len(str(value)) <= MAX_ID_CHARS:
        return str(value)
    return None


def in_utc(moment: datetime) -> datetime | None:
    """A source's time in UTC (UTC when it names no zone), or None when UTC cannot hold it
    (9999-12-31T23:59-23:59 is after datetime.max in UTC): such a time is read as absent."""
    if moment.utcoffset() is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return None


def when(value: Any) -> datetime | None:
    """An ISO 8601 time in UTC, or None when absent, unreadable or out of UTC's range."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return in_utc(parsed)
