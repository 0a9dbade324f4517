"""Entities a writer names with a memory (`remember`'s `entities`, an extractor's or a
translator's tool output): checked strictly here, once, whatever door they came through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from memories.entities.names import MIN_KEY_CHARS, name_key
from memories.models import ENTITY_NAME_MAX_CHARS, EntityKind
from zeromemory.core.errors import ValidationFailed
from zeromemory.core.text import unstorable

MAX_GIVEN_ENTITIES = 20
MAX_GIVEN_ALIASES = 10


# The JSON schema of `entities` (REST's OpenAPI, MCP's tool input, the LLM tools' outputs).
ENTITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": ENTITY_NAME_MAX_CHARS},
        "kind": {"type": "string", "enum": list(EntityKind.values)},
        "aliases": {
            "type": "array",
            "items": {"type": "string", "maxLength": ENTITY_NAME_MAX_CHARS},
            "maxItems": MAX_GIVEN_ALIASES,
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}
ENTITIES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"oneOf": [{"type": "string", "maxLength": ENTITY_NAME_MAX_CHARS}, ENTITY_SCHEMA]},
    "maxItems": MAX_GIVEN_ENTITIES,
    "description": "What the memory is about: names (a service, a person, a repository...), "
    "each a string or {name, kind, aliases}. Optional: the server also finds identifiers, "
    "paths, URLs, handles, tickets and the names the scope already knows.",
}


@dataclass(frozen=True)
class GivenEntity:
    name: str
    kind: str | None = None
    aliases: tuple[str, ...] = ()


def _name(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise ValidationFailed(field, _("A name is a string."))
    text = value.strip()
    if unstorable(text):
        raise ValidationFailed(field, _("NUL characters and lone surrogates are not allowed."))
    if len(text) > ENTITY_NAME_MAX_CHARS:
        raise ValidationFailed(
            field, _("A name is at most %(n)d characters.") % {"n": ENTITY_NAME_MAX_CHARS}
        )
    if len(name_key(text)) < MIN_KEY_CHARS:
        raise ValidationFailed(field, _("A name needs at least two letters or digits."))
    return text


def given_entities(raw: Any, *, field: str = "entities") -> tuple[GivenEntity, ...]:
    """`raw` (a list of names, or of objects with `name` and optional `kind` and `aliases`) as
    entities; raises ValidationFailed naming `field` for anything else."""
    if raw is None:
        return ()
    if isinstance(raw, tuple) and all(isinstance(item, GivenEntity) for item in raw):
        return raw
    if not isinstance(raw, list | tuple):
        raise ValidationFailed(field, _("A list of entities."))
    if len(raw) > MAX_GIVEN_ENTITIES:
        raise ValidationFailed(
            field, _("At most %(n)d entities per memory.") % {"n": MAX_GIVEN_ENTITIES}
        )
    entities = []
    for item in raw:
        if isinstance(item, str):
            entities.append(GivenEntity(_name(item, field)))
            continue
        if not isinstance(item, dict) or not set(item) <= {"name", "kind", "aliases"}:
            raise ValidationFailed(
                field, _("Each entity is a name, or an object with name, kind and aliases.")
            )
        kind = item.get("kind")
        if kind is not None and (not isinstance(kind, str) or kind not in EntityKind.values):
            raise ValidationFailed(
                field,
                _("Unknown entity kind; one of %(kinds)s.")
                % {"kinds": ", ".join(EntityKind.values)},
            )
        aliases = item.get("aliases") or []
        if not isinstance(aliases, list) or len(aliases) > MAX_GIVEN_ALIASES:
            raise ValidationFailed(
                field, _("Aliases are a list of at most %(n)d names.") % {"n": MAX_GIVEN_ALIASES}
            )
        entities.append(
            GivenEntity(
                _name(item.get("name"), field),
                kind,
                tuple(_name(alias, field) for alias in aliases),
            )
        )
    return tuple(entities)


def given_leniently(raw: Any) -> tuple[GivenEntity, ...]:
    """What an LLM's tool output names, each malformed entry dropped rather than failing the
    memory (an extraction or a translation is not refused for a bad entity)."""
    if not isinstance(raw, list):
        return ()
    kept: list[GivenEntity] = []
    for item in raw[:MAX_GIVEN_ENTITIES]:
        try:
            kept.extend(given_entities([item]))
        except ValidationFailed:
            continue
    return tuple(kept)
