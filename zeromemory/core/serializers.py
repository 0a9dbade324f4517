"""Input serializers that refuse what they do not know: unknown fields and loose types."""

from __future__ import annotations

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
