"""SQL helpers shared by the apps' raw queries."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection
from django.db.models import Model
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery

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


def rows_inserted(
    *groups: Sequence[Model], conflicts_ignored: tuple[type[Model], ...] = ()
) -> None:
    """New rows of several models in one message, one round trip where a `bulk_create` of each
    takes one: for rows whose ids nobody reads afterwards (nothing is returned, the objects get
    no primary key). Each statement is the INSERT `bulk_create` sends for its rows (with ON
    CONFLICT DO NOTHING for a model in `conflicts_ignored`); inside a transaction they are part
    of it, outside one PostgreSQL runs the message as one transaction."""
    statements: list[str] = []
    params: list[Any] = []
    for rows in groups:
        if not rows:
            continue
        model = type(rows[0])
        meta = model._meta
        for row in rows:
            # What `bulk_create` does first: a related object saved after it was assigned gives
            # its id now.
            row._prepare_related_fields_for_save(operation_name="bulk_create")
        fields = [
            field
            for field in meta.local_concrete_fields
            if not field.generated and field is not meta.auto_field
        ]
        query = InsertQuery(
            model, on_conflict=OnConflict.IGNORE if model in conflicts_ignored else None
        )
        query.insert_values(fields, rows)
        for sql, values in query.get_compiler(connection=connection).as_sql():
            statements.append(sql)
            params.extend(values)
        for row in rows:
            row._state.adding = False
            row._state.db = connection.alias
    if statements:
        with connection.cursor() as cursor:
            cursor.execute("; ".join(statements), params)
