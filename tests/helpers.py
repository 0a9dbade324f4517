"""Helpers for tests that start other processes against the test database."""

from __future__ import annotations

import os
from urllib.parse import quote

from django.db import connection


def child_database_url() -> str:
    """A DATABASE_URL that points a child process at the database this test uses."""
    db = connection.settings_dict
    host = quote(db["HOST"], safe="") if db["HOST"].startswith("/") else db["HOST"]
    password = f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT']}/{db['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        PYTHONUNBUFFERED="1",
        DJANGO_SETTINGS_MODULE="zeromemory.settings",
        DATABASE_URL=child_database_url(),
        **extra,
    )
    return env
