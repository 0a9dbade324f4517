"""What recall, build_context and briefings check before they search: the query, k, kinds,
the instant of `as_of`, and the scopes (each must be readable; none means every readable
scope)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.utils import timezone
from django.utils.translation import gettext as _

from memories.kinds import kind_for_slug
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed
from zeromemory.core.secrets import refuse_secrets

MAX_K = 50
DEFAULT_K = 10
MAX_QUERY_CHARS = 4000
MAX_SCOPES = 50

MODES = ("hybrid", "vector", "fulltext")

# `as_of` is an instant between the first day a memory here could exist and now (a client's
# clock may run a little ahead of ours: up to AS_OF_SKEW later counts as now).
EARLIEST_AS_OF = datetime(2000, 1, 1, tzinfo=UTC)
AS_OF_SKEW = timedelta(minutes=5)
MAX_AS_OF_CHARS = 64
_LOST_PLUS = re.compile(r"(T\d\d:\d\d(?::\d\d(?:\.\d+)?)?) (\d\d(?::?\d\d)?)$")


@dataclass(frozen=True)
class ScopeSelection:
    """The scopes a read covers (their primary keys) and what the caller asked for."""

    ids: tuple[int, ...]
    requested: list[str]

    @property
    def array(self) -> str:
        """The ids as a SQL array literal, for the read statements to embed: they come from the
        access module's query, never from the caller, and are integers."""
        return "'{" + ",".join(str(int(pk)) for pk in self.ids) + "}'::bigint[]"


def select_scopes(*, actor: Actor, scopes: Sequence[str] | None) -> ScopeSelection:
    """Readable scopes, or the requested ones; a scope the actor cannot read answers 404."""
    if scopes is not None and (
        not isinstance(scopes, list | tuple) or not all(isinstance(s, str) for s in scopes)
    ):
        raise ValidationFailed("scopes", _("Must be a list of scope ids."))
    if not scopes:
        readable = access.readable_scopes(actor).values_list("id", flat=True)
        return ScopeSelection(ids=tuple(readable), requested=[])
    requested = list(dict.fromkeys(scopes))
    if len(requested) > MAX_SCOPES:
        raise ValidationFailed("scopes", _("At most %(n)d scopes.") % {"n": MAX_SCOPES})
    found = dict(
        access.readable_scopes(actor).filter(public_id__in=requested).values_list("public_id", "id")
    )
    for public_id in requested:
        if public_id not in found:
            try:
                access.readable_scope(actor, public_id)  # the access module's own 404
            except NotFound as exc:
                raise exc.naming("scopes") from None
    return ScopeSelection(ids=tuple(found[p] for p in requested), requested=requested)


def validate_query(query: object, *, field_name: str = "query") -> str:
    """Refuse what cannot be searched; return the query unchanged otherwise."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationFailed(field_name, _("The query is empty."))
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationFailed(
            field_name, _("The query is longer than %(n)d characters.") % {"n": MAX_QUERY_CHARS}
        )
    if "\x00" in query:
        raise ValidationFailed(field_name, _("NUL characters are not allowed."))
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationFailed(field_name, _("The query is not valid UTF-8 text.")) from None
    refuse_secrets({field_name: query})  # the activity log would keep it
    return query


def validate_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    if kinds is None:
        return None
    if not isinstance(kinds, list | tuple):
        raise ValidationFailed("kinds", _("Must be a list of kinds."))
    return [kind_for_slug(kind, field="kinds").slug for kind in dict.fromkeys(kinds)] or None


def validate_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ValidationFailed("k", _("Must be an integer from 1 to %(n)d.") % {"n": MAX_K})
    return k


def validate_as_of(as_of: object) -> datetime | None:
    """The instant of an `as_of` (ISO 8601 with a time and a UTC offset, or an aware datetime),
    in UTC; None for none. Naive, malformed, far past and future instants are refused."""
    if as_of is None:
        return None
    if isinstance(as_of, str):
        text = as_of.strip()
        if not text or len(text) > MAX_AS_OF_CHARS or "\x00" in text:
            raise ValidationFailed("as_of", _("Must be an ISO 8601 instant."))
        # A "+02:00" sent unencoded in a query string arrives as " 02:00".
        text = _LOST_PLUS.sub(r"\1+\2", text)
        try:
            as_of = datetime.fromisoformat(text)
        except ValueError:
            raise ValidationFailed(
                "as_of", _("Must be an ISO 8601 instant, e.g. 2026-05-01T12:00:00Z.")
            ) from None
    if not isinstance(as_of, datetime):
        raise ValidationFailed("as_of", _("Must be an ISO 8601 instant."))
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise ValidationFailed(
            "as_of", _("Give the instant's time zone: Z or an offset such as +02:00.")
        )
    try:
        instant = as_of.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 shifted past the calendar's ends by its offset
        instant = datetime.min.replace(tzinfo=UTC) if as_of.year < 2000 else None
    if instant is None or instant > timezone.now() + AS_OF_SKEW:
        raise ValidationFailed("as_of", _("Must not be in the future."))
    if instant < EARLIEST_AS_OF:
        raise ValidationFailed(
            "as_of", _("Must be %(date)s or later.") % {"date": EARLIEST_AS_OF.date().isoformat()}
        )
    return instant
