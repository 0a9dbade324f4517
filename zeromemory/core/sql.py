"""SQL helpers shared by the apps' raw queries."""

from __future__ import annotations

from collections.abc import Iterable

_LITERAL_FORMATS: dict[int, str] = {}


def vector_literal(values: Iterable[float]) -> str:
    """A pgvector literal, `[0.1,0.2,…]`, for a parameter cast with `::vector`. Seven significant
    digits keep all of a float32 embedding's precision in a shorter string. One %-format per
    dimension count, made once: a batch formats a vector per memory, and this is twice as fast
    as formatting each number on its own (the same text)."""
    numbers = tuple(values)
    template = _LITERAL_FORMATS.get(len(numbers))
    if template is None:
        template = "[" + ",".join(("%.7g",) * len(numbers)) + "]"
        _LITERAL_FORMATS[len(numbers)] = template
    return template % numbers
