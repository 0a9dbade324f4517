"""`python manage.py restore FILE`: replace the database's contents with a `backup` dump.

Run it with `make run` stopped (the command starts the embedded database itself when needed):
every table is dropped and recreated from the dump in one transaction, so a failed restore
leaves the database as it was.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from zeromemory.management.commands.backup import run_client


class Command(BaseCommand):
    help = "Replace the zero-memory database's contents with a dump written by `backup`."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="A dump written by manage.py backup")
        parser.add_argument(
            "--noinput", action="store_true", help="Do not ask before replacing the data."
        )

    def handle(self, *args, file: str, noinput: bool, **options) -> None:
        source = Path(file).resolve()
        if not source.is_file():
            raise CommandError(f"No such dump: {source}")
        name = connection.settings_dict["NAME"]
        if not noinput:
            answer = input(f"Replace everything in the database {name!r} with {source}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                raise CommandError("Restore cancelled.")
        connection.close()  # pg_restore drops the tables; hold no connection to them
        run_client(
            "pg_restore",
            [
                "--clean",
                "--if-exists",
                "--no-owner",
                "--single-transaction",
                f"--dbname={name}",
                str(source),
            ],
        )
        self.stdout.write(f"Restored {name!r} from {source}.")
