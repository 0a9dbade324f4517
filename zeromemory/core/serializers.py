"""Input serializers that refuse what they do not know: unknown fields and loose types."""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from zeromemory.core.paging import DEFAULT_LIMIT, MAX_LIMIT, Page


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not declare and bodies that are not JSON objects."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError(
                {"body": [_("Expected a JSON object.")]}, code="invalid"
            )
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {name: [_("Unknown field.")] for name in unknown}, code="unknown_field"
            )
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A string and only a string: numbers and booleans are not silently turned into text."""

    default_error_messages = {"not_a_string": _("Must be a string.")}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("not_a_string")
        if "\x00" in data:
            raise serializers.ValidationError(_("NUL characters are not allowed."))
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"invalid": _("Must be true or false.")}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class PagedQuery(StrictSerializer):
    """Query parameters of a list: the cursor of the previous page and the page size, beside the
    list's own filters (a subclass declares them)."""

    cursor = StrictCharField(required=False, max_length=40)
    limit = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT
    )

    @classmethod
    def read(cls, query_params) -> tuple[dict, Page]:
        """The validated filters (a 400 naming the parameter otherwise) and the page asked for."""
        query = cls(data=query_params.dict())
        query.is_valid(raise_exception=True)
        filters = dict(query.validated_data)
        return filters, Page(cursor=filters.pop("cursor", None), limit=filters.pop("limit"))


S = TypeVar("S", bound=serializers.Serializer)

_kept = threading.local()


def checker(serializer_class: type[S]) -> S:
    """This thread's instance of `serializer_class`, to validate one body after another with
    `run_validation`: DRF builds each instance's fields anew (a deep copy of the declared ones),
    which for a write of ten fields costs more than validating them. Validation keeps nothing on
    the instance; a serializer that reads its context or its initial data is not for this."""
    by_class = _kept.__dict__.setdefault("by_class", {})
    if serializer_class not in by_class:
        by_class[serializer_class] = serializer_class()
    return by_class[serializer_class]


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """What `serializer_class(data=data)` validates `data` to, by this thread's instance. A body
    it refuses is refused again by a new instance's `is_valid(raise_exception=True)`, so the
    caller gets the very error it would have."""
    try:
        return checker(serializer_class).run_validation(data)
    except serializers.ValidationError:
        body = serializer_class(data=data)
        body.is_valid(raise_exception=True)
        return body.validated_data
