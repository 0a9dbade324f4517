"""Read statements planned once per database connection, then run with new values.

Django binds parameters in the client, so PostgreSQL parses and plans every statement it gets
afresh. For most statements that costs a few hundredths of a millisecond; recall's search
statement and its expansion are long (CTEs, subqueries, two legs), and planning them took 1 to
2 ms of every call (`bench/floor.py`'s EXPLAIN listing). `execute` sends such a statement as
`EXECUTE` of a statement the connection prepared the first time it met that text, and forces the
prepared statement's generic plan, which PostgreSQL then keeps for the session:

- the text says what the plan depends on: the scope ids, row counts and limits that recall
  writes into its statements are part of it (another text is another prepared statement); what
  goes in as values (the query, its vector, its words) is read by those statements through a
  materialized CTE, so a plan made without the values is the plan made with them;
- the leading `SET LOCAL` settings stay in the same message, before `EXECUTE`: one round trip,
  and the settings apply to the run (they are read when it executes), as before;
- a prepared statement belongs to the session, not to a transaction (a rollback keeps it), so
  the connection's names are kept here, per psycopg connection, at most `MAX_PER_CONNECTION`
  of them (the oldest deallocated in the message that adds one). After an error the names
  start afresh (a new generation), since this side cannot tell whether the server kept one.

Behind a pooler in transaction mode (ZM_DB_TRANSACTION_POOLING: the next transaction may run on
another server connection) nothing is prepared: the statement is sent as it is.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from zeromemory.core.sql import results_read

MAX_PER_CONNECTION = 64
GENERIC_PLAN = "SET LOCAL plan_cache_mode = force_generic_plan;"
# Said in every other message: inside a caller's transaction a SET LOCAL lasts until its end, so
# a generic plan forced for recall's search must not carry over to the statements after it.
CHOSEN_PLAN = "SET LOCAL plan_cache_mode = auto;"


@dataclass
class _Kept:
    names: OrderedDict[str, None] = field(default_factory=OrderedDict)
    generation: int = 0


_kept: weakref.WeakKeyDictionary[Any, _Kept] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def split_settings(sql: str) -> tuple[str, str]:
    """The `SET ...;` statements a message starts with, and the statement after them."""
    rest, settings = sql.lstrip(), []
    while rest[:4].upper() == "SET ":
        setting, _, rest = rest.partition(";")
        settings.append(setting.strip() + ";")
        rest = rest.lstrip()
    return " ".join(settings), rest


def numbered(statement: str) -> tuple[str, int]:
    """The statement with its `%s` placeholders numbered as PostgreSQL's `$1`, `$2`…, and their
    count (`%%` stays: the whole message is formatted by psycopg again)."""
    if "%(" in statement:
        raise ValueError("named placeholders are not supported")
    pieces = statement.split("%s")
    numbered_text = pieces[0]
    for number, piece in enumerate(pieces[1:], start=1):
        numbered_text += f"${number}{piece}"
    return numbered_text, len(pieces) - 1


def _may_prepare(cursor) -> bool:
    settings = getattr(getattr(cursor, "db", None), "settings_dict", {})
    return not settings.get("DISABLE_SERVER_SIDE_CURSORS", False)


def execute(cursor, sql: str, params: Sequence[Any], *, generic: bool = False) -> None:
    """`cursor.execute(sql, params)` (a Django cursor; `%s` placeholders, leading `SET LOCAL`
    settings allowed), prepared on the connection. The cursor is left at the last result, the
    statement's rows.

    `generic`: always run the plan made without the values (for a statement that reads its
    values only through a materialized CTE, where the values cannot change the plan). Otherwise
    PostgreSQL decides (`plan_cache_mode = auto`): a plan made with the values for the first
    five runs, then the generic one only where its estimated cost is no higher."""
    _sent(cursor, sql, params, generic=generic, then=())
    while cursor.nextset():  # PREPARE's, DEALLOCATE's and the settings' answers first
        pass


def execute_then(
    cursor,
    sql: str,
    params: Sequence[Any],
    *,
    generic: bool = False,
    then: Sequence[tuple[str, Sequence[Any]]],
    commit: bool = False,
) -> list[list[tuple]]:
    """`execute`, and in the same message after it the statements `then` (each one statement
    with `%s` placeholders, no settings, and its values), each prepared on the connection too
    and run with the plan mode of the first: one round trip for all. Returns the rows of each
    statement that answers rows (this one's first), in order.

    `commit`: the message ends with COMMIT, for a transaction with nothing after these
    statements. The caller's atomic block then ends without a round trip of its own (psycopg's
    `commit()` sends nothing once the transaction has ended); where a statement fails, the rest
    of the message is not run and the block rolls back as before.

    A write's inserts after its near lookup are the `then` of a single remember: the text of
    an `INSERT ... SELECT * FROM unnest(...)` is the same for any number of rows, and parsing
    and planning its three dozen typed arrays took a fifth of a millisecond of every write."""
    _sent(cursor, sql, params, generic=generic, then=then, commit=commit)
    return results_read(cursor)


def _sent(
    cursor,
    sql: str,
    params: Sequence[Any],
    *,
    generic: bool,
    then: Sequence[tuple[str, Sequence[Any]]],
    commit: bool = False,
) -> None:
    end = "; COMMIT" if commit else ""
    if not _may_prepare(cursor):
        after = "".join(f"; {statement}" for statement, _ in then)
        cursor.execute(
            sql + after + end, [*params, *(value for _, values in then for value in values)]
        )
        return
    parts = [_parts(sql, len(params)), *(_parts(text, len(values)) for text, values in then)]
    if any(leading for leading, _, _, _ in parts[1:]):
        raise ValueError("settings only before the first statement")
    settings = parts[0][0]
    counts = [count for _, _, count, _ in parts]
    connection = cursor.cursor.connection
    head: list[str] = []
    names: list[str] = []
    with _lock:
        kept = _kept.get(connection)
        if kept is None:
            kept = _kept[connection] = _Kept()
        for _, text, _, digest in parts:
            name = f"zm_{digest}_{kept.generation}"
            names.append(name)
            if name in kept.names:
                kept.names.move_to_end(name)
                continue
            head.append(f"PREPARE {name} AS {text};")
            kept.names[name] = None
            while len(kept.names) > MAX_PER_CONNECTION:
                oldest, _ = kept.names.popitem(last=False)
                if oldest in names:  # this message's own: kept, and another goes
                    kept.names[oldest] = None
                    continue
                head.append(f"DEALLOCATE {oldest};")
        generation = kept.generation
    runs = [
        f"EXECUTE {name}(" + ", ".join(["%s"] * count) + ")" if count else f"EXECUTE {name}"
        for name, count in zip(names, counts, strict=True)
    ]
    plan = GENERIC_PLAN if generic else CHOSEN_PLAN
    message = " ".join([*head, settings, plan, "; ".join(runs)]) + end
    values = [*params, *(value for _, values in then for value in values)]
    try:
        cursor.execute(message, values)
    except Exception:
        with _lock:
            if kept.generation == generation:
                kept.names.clear()
                kept.generation += 1
        raise


@lru_cache(maxsize=128)  # a recall statement's text is about 15 kB, and its body as much
def _parts(sql: str, values: int) -> tuple[str, str, int, str]:
    """A message's leading settings, its statement numbered for PREPARE, its placeholders'
    count and the digest its prepared name is made of: the same for every call of the same text
    (worked out again on each call, they took about 0.1 ms of a request's statements after
    the model's pass)."""
    settings, statement = split_settings(sql)
    body, count = _one_statement(statement, values - settings.count("%s"))
    return settings, body, count, hashlib.blake2b(body.encode(), digest_size=10).hexdigest()


def _one_statement(statement: str, values: int) -> tuple[str, int]:
    """The statement numbered for PREPARE (`numbered`), checked: one statement (what follows a
    semicolon would not be prepared) with a placeholder for each of its `values`."""
    body, count = numbered(statement)
    if ";" in body:
        raise ValueError("one statement after the settings, without semicolons")
    if count != values:
        raise ValueError(f"{count} placeholders, {values} values")
    return body, count
