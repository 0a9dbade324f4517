"""SQL helpers shared by the apps' raw queries."""

from __future__ import annotations

from collections.abc import Iterable


def vector_literal(values: Iterable[float]) -> str:
    """A pgvector literal, `[0.1,0.2,…]`, for a parameter cast with `::vector`."""
    return "[" + ",".join(map(repr, values)) + "]"
