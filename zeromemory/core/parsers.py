"""A JSON parser that names what is wrong with a body: size, encoding, syntax."""

from __future__ import annotations

import json

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser


class BodyError(ParseError):
    """A body the API cannot read; answered as validation_failed on the field `body`."""


class BodyTooLarge(BodyError):
    """A body over ZM_MAX_BODY_BYTES; answered 413 (as the web server's BodyLimit answers)."""


# No request of this API nests deeper than a few levels; deeper bodies are refused before any
# code walks them (Python's own recursion limit would answer a 500).
MAX_DEPTH = 32


def _reject_constant(name: str) -> None:
    raise ValueError(_("%(name)s is not valid JSON.") % {"name": name})


def _problem(data: object) -> tuple[str, str] | None:
    """(field, message) for a body nested too deep or holding text that is not Unicode."""
    stack = [(data, 1, "body")]
    while stack:
        item, depth, field = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return "body", _("The body nests deeper than %(n)d levels.") % {"n": MAX_DEPTH}
            if isinstance(item, dict):
                stack.extend(
                    (value, depth + 1, key if depth == 1 else field) for key, value in item.items()
                )
            else:
                stack.extend((value, depth + 1, field) for value in item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return field, _("Not valid Unicode text (a lone surrogate).")
    return None


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(_("The body is larger than %(n)d bytes.") % {"n": limit})
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise BodyTooLarge(_("The body is larger than %(n)d bytes.") % {"n": limit})
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BodyError(
                _("The body is not valid UTF-8 (byte %(pos)d).") % {"pos": exc.start}
            ) from None
        deep = _("The body nests deeper than %(n)d levels.") % {"n": MAX_DEPTH}
        try:
            data = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            raise BodyError(deep) from None
        except ValueError as exc:
            raise BodyError(_("Malformed JSON: %(err)s") % {"err": exc}) from None
        problem = _problem(data)
        if problem is not None:
            field, message = problem
            if field == "body":
                raise BodyError(message)
            raise ValidationError({field: [message]})
        return data
