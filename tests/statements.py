"""What the test's connection sent, read as it ran: an EXECUTE of a statement the connection
prepared (`zeromemory.core.prepared`) written out as that statement's text, from PostgreSQL's
own `pg_prepared_statements`, so a test can look for a table or a column in what a request
sent whether its statement went as text or as a kept plan."""

from __future__ import annotations

import re

from django.db import connection

_PREPARE = re.compile(r"PREPARE zm_\w+ AS .*?;(?=\s*(?:PREPARE|DEALLOCATE|SET|EXECUTE))", re.S)
_EXECUTE = re.compile(r"EXECUTE (zm_\w+)")


def as_run(sql: str) -> str:
    """The message with each EXECUTE written as the statement it runs and the PREPAREs left
    out (call it while the connection that sent the message is still open)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'zm%%'")
        # `statement` is the whole message that held the PREPARE; the body ends at the first
        # semicolon after it (a prepared statement has none of its own).
        kept = {
            name: text.split(f"PREPARE {name} AS ", 1)[1].split(";", 1)[0]
            for name, text in cursor.fetchall()
        }
    return _EXECUTE.sub(lambda found: kept[found[1]], _PREPARE.sub("", sql))
