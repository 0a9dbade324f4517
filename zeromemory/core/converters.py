"""Path converters for the ids and names in URLs, so a malformed one (a NUL byte, a slash-free
oddity) never reaches a query: it does not match the route and answers 404 like a missing object.
"""

from __future__ import annotations

from django.urls import register_converter


class PublicIdConverter:
    """`mem_…`, `scp_…`, `tok_…`: a prefix and a time-sortable random part."""

    regex = r"[A-Za-z0-9_]{1,40}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class UsernameConverter(PublicIdConverter):
    """What Django's username validator allows: letters, digits and @ . + - _."""

    regex = r"[\w.@+-]{1,150}"


register_converter(PublicIdConverter, "id")
register_converter(UsernameConverter, "username")
