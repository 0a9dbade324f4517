"""SQL helpers shared by the apps' raw queries."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import connection, connections, router
from django.db.models import Field, Model
from django.db.models.constants import OnConflict
from django.db.models.sql import InsertQuery
from pgvector.django import VectorField

_LITERAL_FORMATS: dict[tuple[int, int], str] = {}
# autovacuum's own rule for stale statistics (its default threshold and scale factor)
ANALYZE_THRESHOLD = 50
ANALYZE_SCALE = 0.1


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


def ids_taken(model: type[Model], count: int) -> list[int]:
    """`count` values of the model's primary key sequence, taken now, in ascending order: the
    ids of new rows that other rows are to reference before they are inserted (the insert
    gives them, `insert_with_ids`). A rolled-back transaction leaves them unused, as a failed
    insert does its own."""
    if count <= 0:
        return []
    opts = model._meta
    database = connections[router.db_for_write(model)]
    with database.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [opts.db_table, opts.pk.column, count],
        )
        return sorted(pk for (pk,) in cursor.fetchall())


class Bound(bytes):
    """A value already written as SQL by psycopg's own quoting (`Insert.bound`): sent as it is,
    by a cursor that binds on the client (Django's, as this project configures it)."""


class _BoundDumper(psycopg.adapt.Dumper):
    def dump(self, obj: Bound) -> bytes:
        return bytes(obj)

    def quote(self, obj: Bound) -> bytes:
        return bytes(obj)


# Every connection made from now on (Django's are made after the apps load this module).
psycopg.adapters.register_dumper(Bound, _BoundDumper)


@dataclass
class Insert:
    """An insert of new rows of one model, written but not sent (`insert_with_ids`): its text
    and values, a vector column's texts still to give (`vectors_given`) when the vectors are not
    computed yet, and `rows_returned` to set on the objects what the statement answers."""

    sql: str
    params: list[Any]
    objs: Sequence[Model]
    returned: list[Field]
    vector_columns: dict[str, int]
    database: Any

    def vectors_given(self, name: str, texts: Sequence[str | None]) -> None:
        """The texts (`exact_vector_literal`s) of the vector field `name`, one per row."""
        if len(texts) != len(self.objs):
            raise ValueError(f"{len(texts)} vectors for {len(self.objs)} rows")
        self.params[self.vector_columns[name]] = list(texts)

    def bound(self) -> None:
        """Its values but the vectors still to give written as SQL now (each as psycopg binds it
        on the client), so that sending it later binds only the vectors. A single remember's
        insert is made while the model computes its vector, and binding its three dozen arrays
        then took half a millisecond after the model."""
        quoting = psycopg.ClientCursor(self.database.connection)
        encoding = self.database.connection.info.encoding
        later = set(self.vector_columns.values())
        for index, value in enumerate(self.params):
            if index not in later:
                self.params[index] = Bound(quoting.mogrify("%s", [value]).encode(encoding))

    def rows_returned(self, rows: Sequence[Sequence[Any]]) -> None:
        """Set on each object what `bulk_create` sets: its id, its generated columns."""
        for obj, row in zip(self.objs, rows, strict=True):
            for f, value in zip(self.returned, row, strict=True):
                if hasattr(f, "from_db_value"):
                    value = f.from_db_value(value, None, self.database)
                setattr(obj, f.attname, value)
            obj._state.adding = False
            obj._state.db = self.database.alias


def insert_with_ids(
    objs: Sequence[Model],
    *,
    vector_texts: Mapping[str, Sequence[str | None]] | None = None,
    vectors_later: Collection[str] = (),
) -> Insert | None:
    """`rows_inserted_with_ids`' statement for these rows, not sent: the caller sends it
    (alone or with others in one message) and gives `Insert.rows_returned` its answer. Rows
    whose primary keys are all set (ids the caller took from the table's sequence) go in with
    them; otherwise none may have one. The vector fields in `vectors_later` wait for
    `Insert.vectors_given`. None when a field holds an SQL expression (a database default):
    such rows go through `bulk_create`."""
    model = type(objs[0])
    opts = model._meta
    with_pk = all(obj.pk is not None for obj in objs)
    if opts.parents or (not with_pk and any(obj.pk is not None for obj in objs)):
        raise ValueError("insert_with_ids takes new rows of a model without parents")
    database = connections[router.db_for_write(model)]
    concrete = [f for f in opts.get_fields() if f.concrete]
    fields = [f for f in concrete if not f.generated and (with_pk or not f.primary_key)]
    given = vector_texts or {}
    columns: list[list[Any]] = []
    casts: list[str] = []
    vector_columns: dict[str, int] = {}
    for f in fields:
        if isinstance(f, VectorField):
            vector_columns[f.name] = len(columns)
            texts = given.get(f.name)
            if f.name in vectors_later:
                texts = [None] * len(objs)
            elif texts is None:
                texts = [
                    None if value is None else exact_vector_literal(value)
                    for value in (f.pre_save(obj, add=True) for obj in objs)
                ]
            columns.append(list(texts))
            casts.append("%s::text[]::vector[]")
            continue
        values = [f.pre_save(obj, add=True) for obj in objs]
        if any(hasattr(value, "resolve_expression") for value in values):
            return None
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
    return Insert(sql, columns, objs, returned, vector_columns, database)


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
    insert = insert_with_ids(objs, vector_texts=vector_texts)
    if insert is None:
        type(objs[0])._default_manager.bulk_create(objs)
        return
    with insert.database.cursor() as cursor:
        cursor.execute(insert.sql, insert.params)
        insert.rows_returned(cursor.fetchall())


def rows_statements(
    *groups: Sequence[Model], conflicts_ignored: tuple[type[Model], ...] = ()
) -> list[tuple[str, list[Any]]]:
    """`rows_inserted`'s statements, not sent: the caller sends them in a message of its own
    (`sent_together`). The related rows' ids are read now (they must be set, saved or taken
    from their sequence), and the rows count as saved."""
    statements: list[tuple[str, list[Any]]] = []
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
            statements.append((sql, list(values)))
        for row in rows:
            row._state.adding = False
            row._state.db = connection.alias
    return statements


def rows_inserted(
    *groups: Sequence[Model], conflicts_ignored: tuple[type[Model], ...] = ()
) -> None:
    """New rows of several models in one message, one round trip where a `bulk_create` of each
    takes one: for rows whose ids nobody reads afterwards (nothing is returned, the objects get
    no primary key). Each statement is the INSERT `bulk_create` sends for its rows (with ON
    CONFLICT DO NOTHING for a model in `conflicts_ignored`); inside a transaction they are part
    of it, outside one PostgreSQL runs the message as one transaction."""
    statements = rows_statements(*groups, conflicts_ignored=conflicts_ignored)
    if statements:
        with connection.cursor() as cursor:
            sent_together(cursor, statements)


def sent_together(cursor, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple]]:
    """Several statements (each its text with `%s` placeholders and its values) in one message
    on a Django cursor: one round trip. Returns the rows of each statement that answers rows
    (a SELECT, an INSERT ... RETURNING), in their order."""
    if not statements:
        return []
    cursor.execute(
        "; ".join(sql for sql, _ in statements),
        [value for _, values in statements for value in values],
    )
    return results_read(cursor)


def results_read(cursor) -> list[list[tuple]]:
    """The rows of each result of the message a cursor just sent that has rows, in order (the
    results of settings, PREPARE and inserts without RETURNING have none); the cursor is left
    after its last result."""
    answered = []
    while True:
        if cursor.description is not None:
            answered.append(cursor.fetchall())
        if not cursor.nextset():
            return answered


def statistics_kept(*, model: type[Model], added: int) -> bool:
    """After `added` rows went into `model`'s table at once: its statistics gathered now when
    autovacuum's own rule calls them stale (more new rows than 50 + a tenth of those counted),
    not at its next round, a minute or more away. A plan made while the table was nearly empty
    reads it by sequential scan, kept prepared statements' plans included; after a burst of
    rows (a hygiene scan's pairs) every such read stays slow until the statistics move, and
    gathering them invalidates those plans. Returns whether it analyzed."""
    if added <= ANALYZE_THRESHOLD:
        return False
    table = model._meta.db_table
    with connections[router.db_for_write(model)].cursor() as cursor:
        cursor.execute(
            "SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = %s::regclass", [table]
        )
        (counted,) = cursor.fetchone()
        if added <= ANALYZE_THRESHOLD + ANALYZE_SCALE * counted:
            return False
        cursor.execute(f"ANALYZE {cursor.db.ops.quote_name(table)}")
    return True
