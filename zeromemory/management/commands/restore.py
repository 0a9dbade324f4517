"""`python manage.py restore FILE`: replace the database's contents with a `backup` dump.

Run it with `make run` stopped (the command starts the embedded database itself when needed):
the schema `public` is dropped with everything in it and recreated from the dump, in one
transaction, so a failed restore leaves the database as it was. (pg_restore's own `--clean`
cannot drop a partitioned table's partitions: it drops each partition's primary key first,
which PostgreSQL refuses for a constraint the partition inherits.)
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from zeromemory.management.commands.backup import client_command, postgres_bin

# Run first, in the restore's transaction: what the dump recreates goes, extensions included
# (without the notice that lists each object dropped).
REPLACE = (
    b"SET client_min_messages = warning;\n"
    b"DROP SCHEMA IF EXISTS public CASCADE;\n"
    b"CREATE SCHEMA public;\n"
    b"RESET client_min_messages;\n"
)


def restore_replacing(*, name: str, source: Path) -> None:
    """BEGIN, REPLACE, the dump's SQL (pg_restore's script, streamed) and COMMIT, sent to psql,
    which stops at the first error. COMMIT is sent only once pg_restore has read the whole dump:
    a dump that breaks half-way ends the session in the open transaction, which PostgreSQL rolls
    back. Raise CommandError if either program fails."""
    script = [str(postgres_bin("pg_restore")), "--no-owner", "--file=-", str(source)]
    psql, env = client_command(
        "psql",
        ["--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1", "--file=-", f"--dbname={name}"],
    )
    with (
        subprocess.Popen(script, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as reader,
        subprocess.Popen(
            psql,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        ) as writer,
    ):
        try:
            writer.stdin.write(b"BEGIN;\n" + REPLACE)
            shutil.copyfileobj(reader.stdout, writer.stdin, 1 << 20)
            if reader.wait() == 0:
                writer.stdin.write(b"COMMIT;\n")
        except BrokenPipeError:  # psql stopped at an error: its message says which
            pass
        finally:
            writer.stdin.close()
        read_error = reader.stderr.read().decode(errors="replace").strip()
        write_error = writer.stderr.read().decode(errors="replace").strip()
    if reader.returncode != 0:
        raise CommandError(f"pg_restore failed, nothing was restored: {read_error}")
    if writer.returncode != 0:
        raise CommandError(f"psql failed, nothing was restored: {write_error}")


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
        connection.close()  # the restore drops the tables; hold no connection to them
        restore_replacing(name=name, source=source)
        self.stdout.write(f"Restored {name!r} from {source}.")
