"""SQL helpers shared by the apps' raw queries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import connection, connections, router
from django.db.models import Model
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery
from pgvector.django import VectorField

_LITERAL_FORMATS: dict[tuple[int, int], str] = {}


def _literal(values: Iterable[float], digits: int) -> str:
    """`[0.1,0.2,…]` with `digits` significant digits a number. One %-format per dimension
    count, made once: twice as fast as formatting each number on its own (the same text)."""
    numbers = tuple(values)
    template = _LITERAL_FORMATS.get((digits, len(numbers)))
    if template is None:
        template = "[" + ",".join((f"%.{digits}g",) * len(numbers)) + "]"
        _LITERAL_FORMATS[(digits, len(numbers))] = template
    return template % numbers


def vector_literal(values: Iterable[float]) -> str:
    """A pgvector literal for a parameter cast with `::vector`. Seven significant digits keep a
    float32 embedding within a unit of its last place in a shorter string: a query compared
    with stored vectors (what is stored is written with `exact_vector_literal`)."""
    return _literal(values, 7)


def exact_vector_literal(values: Iterable[float]) -> str:
    """A pgvector literal that PostgreSQL reads back as exactly these float32 values: nine
    significant digits are enough for any float32 to come back bit for bit (pgvector parses
    each number with `strtof`), where `vector_literal`'s seven are not. What a stored vector
    is written with; half the time of pgvector's own text of a vector (`repr` of each number)."""
    return _literal(values, 9)


def rows_inserted_with_ids(
    objs: Sequence[Model], *, vector_texts: Mapping[str, Sequence[str | None]] | None = None
) -> None:
    """Insert new rows of one model in one statement whose text is the same for any number of
    rows, `INSERT ... SELECT * FROM unnest(%s::type[], ...) RETURNING ...` with one array per
    column, and set on each object what `bulk_create` sets (its id, its generated columns).

    Django's `bulk_create` writes this statement for the column types it knows, but not for a
    pgvector column: a model with one gets a VALUES list with a placeholder per value (about
    3,000 for a batch of 100 memories) that psycopg splits and quotes in Python on every call,
    each vector written as the `repr` of its 384 numbers. Here each vector column goes as one
    text array of `exact_vector_literal`s (or the caller's `vector_texts`, the same literals
    made once for another statement), cast to `vector[]` in PostgreSQL: the same float32
    values. Through Django's own cursor, so it is logged and wrapped like any other statement.
    Like `bulk_create`: no `save()`, no signals; triggers and generated columns are
    PostgreSQL's as ever. The related rows must be saved first (their ids are read from the
    objects); a field holding an SQL expression (a database default) sends the rows through
    `bulk_create`."""
    if not objs:
        return
    model = type(objs[0])
    opts = model._meta
    if opts.parents or any(obj.pk is not None for obj in objs):
        raise ValueError("rows_inserted_with_ids takes new rows of a model without parents")
    database = connections[router.db_for_write(model)]
    concrete = [f for f in opts.get_fields() if f.concrete]
    fields = [f for f in concrete if not f.generated and not f.primary_key]
    given = vector_texts or {}
    columns: list[list[Any]] = []
    casts: list[str] = []
    for f in fields:
        if isinstance(f, VectorField):
            texts = given.get(f.name)
            if texts is None:
                texts = [
                    None if value is None else exact_vector_literal(value)
                    for value in (f.pre_save(obj, add=True) for obj in objs)
                ]
            columns.append(list(texts))
            casts.append("%s::text[]::vector[]")
            continue
        values = [f.pre_save(obj, add=True) for obj in objs]
        if any(hasattr(value, "resolve_expression") for value in values):
            model._default_manager.bulk_create(objs)
            return
        columns.append([f.get_db_prep_save(value, database) for value in values])
        # The type without its modifiers, as Django's own UNNEST insert casts: varchar[], not
        # varchar(40)[] (the column's own type still checks each value).
        casts.append("%s::" + f.db_type(database).split("(")[0] + "[]")
    returned = [opts.pk] + [f for f in concrete if f.generated]
    quote = database.ops.quote_name
    sql = "INSERT INTO {} ({}) SELECT * FROM unnest({}) RETURNING {}".format(  # noqa: S608
        quote(opts.db_table),
        ", ".join(quote(f.column) for f in fields),
        ", ".join(casts),
        ", ".join(quote(f.column) for f in returned),
    )
    with database.cursor() as cursor:
        cursor.execute(sql, columns)
        rows = cursor.fetchall()
    for obj, row in zip(objs, rows, strict=True):
        for f, value in zip(returned, row, strict=True):
            if hasattr(f, "from_db_value"):
                value = f.from_db_value(value, None, database)
            setattr(obj, f.attname, value)
        obj._state.adding = False
        obj._state.db = database.alias


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
        relations = [field for field in meta.concrete_fields if field.is_relation]
        for row in rows:
            # What `bulk_create` checks first: a related object saved after it was assigned
            # gives its id now (reading a relation whose id is None sends no query).
            for relation in relations:
                if getattr(row, relation.attname) is None:
                    related = getattr(row, relation.name)
                    if related is None:
                        continue
                    value = getattr(related, relation.target_field.attname)
                    if value is None:
                        raise ValueError(
                            f"{model.__name__}.{relation.name}: the related row is not saved"
                        )
                    setattr(row, relation.attname, value)
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
