"""Running one function of a data migration on rows a test planted (the migration itself ran
when the test database was made, before those rows existed)."""

from __future__ import annotations

import importlib

from django.apps import apps
from django.db import connection


def run_migration_step(migration: str, function: str) -> None:
    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    step = getattr(importlib.import_module(f"memories.migrations.{migration}"), function)
    step(apps, editor)
