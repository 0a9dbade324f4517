"""Checks that the database server has what the product needs."""

from __future__ import annotations

REQUIRED_EXTENSIONS = ("vector", "pg_trgm")


class MissingExtension(RuntimeError):
    pass


def missing_extensions_message(missing: list[str]) -> str:
    names = ", ".join(missing)
    return (
        f"The PostgreSQL server behind DATABASE_URL lacks the extension(s): {names}. "
        "Install pgvector 0.8 or newer "
        "(Debian/Ubuntu: apt install postgresql-<version>-pgvector; "
        "other systems: see pgvector's installation notes) and the contrib package for pg_trgm, "
        "or unset DATABASE_URL to use the embedded PostgreSQL, which ships with pgvector."
    )


def require_extensions(connection) -> None:
    """Raise MissingExtension naming what to install when the server cannot load an extension."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM pg_available_extensions WHERE name = ANY(%s)",
            [list(REQUIRED_EXTENSIONS)],
        )
        available = {row[0] for row in cursor.fetchall()}
    missing = [name for name in REQUIRED_EXTENSIONS if name not in available]
    if missing:
        raise MissingExtension(missing_extensions_message(missing))
