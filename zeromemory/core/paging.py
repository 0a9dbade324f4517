"""Cursor paging over time-sortable public ids: newest first, the cursor is the last id seen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


@dataclass(frozen=True)
class Page:
    cursor: str | None = None
    limit: int = DEFAULT_LIMIT


def cursor_page(rows: QuerySet, page: Page) -> tuple[list[Any], str | None]:
    """One page of `rows` (newest first) and the cursor of the next one (None on the last)."""
    if page.cursor:
        rows = rows.filter(public_id__lt=page.cursor)
    found = list(rows.order_by("-public_id")[: page.limit + 1])
    next_cursor = found[page.limit - 1].public_id if len(found) > page.limit else None
    return found[: page.limit], next_cursor
