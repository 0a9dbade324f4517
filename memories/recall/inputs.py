"""The read requests: recall, build_context and briefing, each one pydantic model that every door
uses. The REST views parse their body (or query string) into it, the MCP server validates a tool's
arguments with it and publishes its JSON schema as the tool's input schema, and in-process callers
(the dashboard, the bench, prompts) hand their keyword arguments to the same model inside the
service, so a refusal there is logged like any other call.

A model checks everything that needs no database: types (strict: "10" is no integer, 7 is no
query), lengths, ranges, NUL and lone surrogates, an empty query, a secret in the query, the
instant of `as_of`. What needs the database stays in the service: the kinds must exist
(`validate_kinds`) and the scopes must be readable (`select_scopes`, 404 otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Self, TypeVar

from django.utils import timezone
from django.utils.translation import gettext as _
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from memories.activity.logged import Entry, activity_logged
from memories.kinds import kind_for_slug
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed
from zeromemory.core.secrets import find_secret
from zeromemory.core.text import unstorable

MAX_K = 50
DEFAULT_K = 10
MAX_QUERY_CHARS = 4000
MAX_SCOPES = 50
MAX_SCOPE_ID_CHARS = 40
MAX_KIND_CHARS = 32
MAX_CONVERSATION_CHARS = 200
# The token budget of build_context and briefing.
MIN_TOKENS = 100
MAX_TOKENS = 32_000
DEFAULT_TOKENS = 2_000

MAX_LOGGED_KINDS = 20

MODES = ("hybrid", "vector", "fulltext")

# `as_of` is an instant between the first day a memory here could exist and now (a client's
# clock may run a little ahead of ours: up to AS_OF_SKEW later counts as now).
EARLIEST_AS_OF = datetime(2000, 1, 1, tzinfo=UTC)
AS_OF_SKEW = timedelta(minutes=5)
MAX_AS_OF_CHARS = 64
_INTEGER = re.compile(r"-?[0-9]{1,9}")
_LOST_PLUS = re.compile(r"(T\d\d:\d\d(?::\d\d(?:\.\d+)?)?) (\d\d(?::?\d\d)?)$")


def _refused(message: str) -> PydanticCustomError:
    # The message goes in as context, not as the template: a "{" in it is text, not a field.
    return PydanticCustomError("invalid", "{reason}", {"reason": message})


def _readable(text: str) -> str:
    """Refuse text PostgreSQL cannot hold: NUL, and lone surrogates (not UTF-8)."""
    if "\x00" in text:
        raise _refused(_("NUL characters are not allowed."))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refused(_("Not valid Unicode text (a lone surrogate).")) from None
    return text


def _searchable(query: str) -> str:
    """Refuse what cannot be searched; the query itself stays exactly as sent."""
    if not query.strip():
        raise _refused(_("The query is empty."))
    found = find_secret(query)
    if found:  # the activity log would keep it
        raise _refused(
            _(
                "This looks like %(what)s. Secrets are never stored in memory; remove it "
                "(refer to where the secret is kept instead). Nothing was stored."
            )
            % {"what": found}
        )
    return query


def as_of_instant(as_of: object) -> datetime | None:
    """The instant of an `as_of` (ISO 8601 with a time and a UTC offset, or an aware datetime),
    in UTC; None for none. Naive, malformed, far past and future instants are refused."""
    if as_of is None:
        return None
    if isinstance(as_of, str):
        text = as_of.strip()
        if not text or len(text) > MAX_AS_OF_CHARS or "\x00" in text:
            raise _refused(_("Must be an ISO 8601 instant."))
        # A "+02:00" sent unencoded in a query string arrives as " 02:00".
        text = _LOST_PLUS.sub(r"\1+\2", text)
        try:
            as_of = datetime.fromisoformat(text)
        except ValueError:
            raise _refused(_("Must be an ISO 8601 instant, e.g. 2026-05-01T12:00:00Z.")) from None
    if not isinstance(as_of, datetime):
        raise _refused(_("Must be an ISO 8601 instant."))
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise _refused(_("Give the instant's time zone: Z or an offset such as +02:00."))
    try:
        instant = as_of.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 shifted past the calendar's ends by its offset
        instant = datetime.min.replace(tzinfo=UTC) if as_of.year < 2000 else None
    if instant is None or instant > timezone.now() + AS_OF_SKEW:
        raise _refused(_("Must not be in the future."))
    if instant < EARLIEST_AS_OF:
        raise _refused(
            _("Must be %(date)s or later.") % {"date": EARLIEST_AS_OF.date().isoformat()}
        )
    return instant


def _checked_as_of(as_of: str | datetime | None) -> str | datetime | None:
    as_of_instant(as_of)  # refuses; the value stays as sent (the activity row shows it)
    return as_of


Text = Annotated[str, AfterValidator(_readable)]
Query = Annotated[Text, Field(max_length=MAX_QUERY_CHARS), AfterValidator(_searchable)]
ScopeIds = Annotated[
    list[Annotated[Text, Field(max_length=MAX_SCOPE_ID_CHARS)]] | None,
    Field(
        max_length=MAX_SCOPES,
        description="Scope ids from list_scopes; omit for every scope you can read.",
    ),
]
Kinds = Annotated[list[Annotated[Text, Field(max_length=MAX_KIND_CHARS)]] | None, Field()]
K = Annotated[int, Field(ge=1, le=MAX_K)]
MaxTokens = Annotated[
    int, Field(ge=MIN_TOKENS, le=MAX_TOKENS, description="Token budget for the whole answer.")
]
# Sent as a string; an in-process caller (the dashboard's form) may hand an aware datetime.
AsOf = Annotated[
    str | datetime | None,
    AfterValidator(_checked_as_of),
    WithJsonSchema({"anyOf": [{"type": "string", "maxLength": MAX_AS_OF_CHARS}, {"type": "null"}]}),
    Field(
        description="An ISO 8601 instant with its offset (2026-05-01T12:00:00Z): answer from "
        "the memories valid then, as they read then. Omit for now.",
    ),
]
Nearest = Annotated[
    bool,
    Field(
        description="Answer the k nearest memories even when none is relevant to the query "
        "(each hit says whether it is). Off by default: below the relevance floor, recall "
        "answers nothing and says so.",
    ),
]
ConversationId = Annotated[
    Text,
    Field(
        max_length=MAX_CONVERSATION_CHARS,
        description="Your conversation (session) id; pass the same one on every call of a "
        "session (mark_used counts what was served in it).",
    ),
]


R = TypeVar("R", bound="ReadRequest")


class ReadRequest(BaseModel):
    """What every read request shares: strict types, no unknown fields, `as_of`, the scopes and
    the caller's conversation."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    # Each request declares its fields itself, in the order its schema lists them; every one
    # has these three.
    if TYPE_CHECKING:
        scopes: list[str] | None
        as_of: str | datetime | None
        conversation_id: str

    @classmethod
    def parse(cls, data: object) -> Self:
        """The request from a JSON body (or keyword arguments); a refusal names every field it
        refuses (validation_failed, 400)."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise ValidationFailed("body", _("Expected a JSON object."))
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise refusal(exc) from None

    @classmethod
    def query_arguments(cls, params: Mapping[str, str]) -> dict[str, Any]:
        """A query string's parameters as the arguments a JSON body would carry: the whole
        numbers of integer fields as integers, the scopes comma-separated as a list. Nothing is
        refused here: the model refuses "lots" tokens in the service, as it does for a body."""
        arguments: dict[str, Any] = dict(params)
        for name, value in arguments.items():
            field = cls.model_fields.get(name)
            if field is not None and field.annotation is int and _INTEGER.fullmatch(value):
                arguments[name] = int(value)
        if "scopes" in arguments:
            scopes = [s.strip() for s in arguments["scopes"].split(",") if s.strip()]
            arguments["scopes"] = scopes or None
        return arguments

    @property
    def instant(self) -> datetime | None:
        """`as_of` as the UTC instant the statements read at (checked when the model was made)."""
        return as_of_instant(self.as_of)

    @classmethod
    def logged_options(cls, sent: Mapping[str, Any]) -> dict[str, Any]:
        """The options an activity row keeps, from the arguments as sent: a refused call's too,
        so nothing here trusts their types, and nothing unbounded is kept."""
        options = cls._own_options(sent)
        as_of = sent.get("as_of")
        if isinstance(as_of, datetime) or (
            isinstance(as_of, str) and len(as_of) <= MAX_AS_OF_CHARS and not unstorable(as_of)
        ):
            options["as_of"] = str(as_of)
        return options

    @classmethod
    def _own_options(cls, sent: Mapping[str, Any]) -> dict[str, Any]:
        return {}


class RecallRequest(ReadRequest):
    """recall: the k best memories for the query."""

    query: Annotated[Query, Field(description="In English; run exactly as sent, never translated.")]
    scopes: ScopeIds = None
    kinds: Kinds = None
    k: K = DEFAULT_K
    as_of: AsOf = None
    nearest: Nearest = False
    conversation_id: ConversationId = ""

    @classmethod
    def _own_options(cls, sent: Mapping[str, Any]) -> dict[str, Any]:
        k, kinds = sent.get("k", DEFAULT_K), sent.get("kinds")
        if isinstance(kinds, list | tuple) and kinds and len(kinds) <= MAX_LOGGED_KINDS:
            kinds = [_logged_text(kind, MAX_KIND_CHARS) for kind in kinds]
        else:
            kinds = None
        options: dict[str, Any] = {"k": _logged_int(k), "kinds": kinds}
        mode = sent.get("mode", "hybrid")
        if mode != "hybrid":
            options["mode"] = mode
        if sent.get("nearest") is True:
            options["nearest"] = True
        return options


class ContextRequest(ReadRequest):
    """build_context: what an agent should know about a topic, within a token budget."""

    topic: Annotated[
        Query, Field(description="In English; searched exactly as sent, never translated.")
    ]
    max_tokens: MaxTokens = DEFAULT_TOKENS
    scopes: ScopeIds = None
    as_of: AsOf = None
    conversation_id: ConversationId = ""

    @classmethod
    def _own_options(cls, sent: Mapping[str, Any]) -> dict[str, Any]:
        return {"max_tokens": _logged_int(sent.get("max_tokens", DEFAULT_TOKENS))}


class BriefingRequest(ReadRequest):
    """briefing: build_context without a topic, for the start of a session."""

    scopes: ScopeIds = None
    max_tokens: MaxTokens = DEFAULT_TOKENS
    as_of: AsOf = None
    conversation_id: ConversationId = ""

    @classmethod
    def _own_options(cls, sent: Mapping[str, Any]) -> dict[str, Any]:
        return {"max_tokens": _logged_int(sent.get("max_tokens", DEFAULT_TOKENS))}


def _logged_int(value: object) -> int | None:
    """An integer option as sent, when it is one a row can keep (no bool, no 400 digits)."""
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 2**53:
        return None
    return value


def _logged_text(value: object, limit: int) -> str:
    """Text as sent, when a row can keep it: a string within the limit, without NUL."""
    if not isinstance(value, str) or len(value) > limit or "\x00" in value:
        return ""
    return value


@contextmanager
def logged_read(
    *,
    actor: Actor,
    operation: str,
    model: type[R],
    request: R | Mapping[str, Any],
    query_field: str | None = None,
    **service_options: Any,
) -> Iterator[tuple[R, Entry]]:
    """The request parsed by `model` (the one validation, whichever door it came through) and
    its activity row: written for refused requests too, with the query, scopes and options as
    sent (bounded: an oversized refusal keeps none of its text), and the caller's conversation."""
    sent = dict(request) if isinstance(request, BaseModel) else request
    if not isinstance(sent, Mapping):
        sent = {}
    refused: ValidationFailed | None = None
    try:
        parsed = model.parse(request)
    except ValidationFailed as exc:
        refused = exc
    else:
        if parsed.conversation_id:
            actor = replace(actor, conversation_id=parsed.conversation_id)
    scopes = sent.get("scopes")
    with activity_logged(
        actor=actor,
        operation=operation,
        query=_logged_text(sent.get(query_field), MAX_QUERY_CHARS) if query_field else "",
        scopes=[_logged_text(s, MAX_SCOPE_ID_CHARS) for s in scopes[:MAX_SCOPES]]
        if isinstance(scopes, list | tuple)
        else None,
        options=model.logged_options({**sent, **service_options}),
    ) as entry:
        if refused is not None:
            raise refused
        yield parsed, entry


def refusal(exc: ValidationError) -> ValidationFailed:
    """A pydantic refusal as the API's: validation_failed naming each field (`scopes.0` for an
    item), "field: message" of the first as the message (as REST's and MCP's other refusals)."""
    details: dict[str, list[str]] = {}
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "body"
        message = _("Unknown field.") if error["type"] == "extra_forbidden" else error["msg"]
        details.setdefault(field, []).append(message)
    field, messages = next(iter(details.items()))
    refused = ValidationFailed(field.split(".")[0], f"{field}: {messages[0]}")
    refused.details = details
    return refused


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
    if not scopes:
        readable = access.readable_scope_ids(actor)
        return ScopeSelection(ids=tuple(pk for _, pk in readable), requested=[])
    requested = list(dict.fromkeys(scopes))
    found = dict(access.readable_scope_ids(actor, public_ids=requested))
    for public_id in requested:
        if public_id not in found:
            try:
                access.readable_scope(actor, public_id)  # the access module's own 404
            except NotFound as exc:
                raise exc.naming("scopes") from None
    return ScopeSelection(ids=tuple(found[p] for p in requested), requested=requested)


def validate_kinds(kinds: Sequence[str] | None) -> list[str] | None:
    """The kinds' slugs (each must be in the catalogue), or None for every kind."""
    if kinds is None:
        return None
    return [kind_for_slug(kind, field="kinds").slug for kind in dict.fromkeys(kinds)] or None
