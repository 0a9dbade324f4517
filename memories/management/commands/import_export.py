"""`manage.py import_export FILE --scope ID --user NAME [--keep-times]`: an export written into a
scope, as that user signed in (who must be able to write the scope, and administer it to keep the
archive's times), with every check of the REST import but its per-request budget."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.portability.archive import read_archive
from memories.portability.archive_import import archive_import
from scopes.access import administrable_scope, writable_scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError


class Command(BaseCommand):
    help = "Import a zero-memory export (a zip) into a scope."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file")
        parser.add_argument("--scope", required=True, help="The id of the scope to write.")
        parser.add_argument("--user", required=True, help="Who imports (a writer of the scope).")
        parser.add_argument(
            "--keep-times",
            action="store_true",
            help="Keep the archive's times (the user must administer the scope).",
        )

    def handle(
        self, *args, file: str, scope: str, user: str, keep_times: bool = False, **options
    ) -> None:
        users = get_user_model()
        person = users.objects.filter(**{users.USERNAME_FIELD: user}, is_active=True).first()
        if person is None:
            raise CommandError(f"no active user named {user}")
        try:
            actor = Actor(user=person)
            target = (administrable_scope if keep_times else writable_scope)(actor, scope)
            with open(file, "rb") as upload:
                archive = read_archive(upload)
            result = archive_import(
                actor=actor, scope=target, archive=archive, keep_times=keep_times
            )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        except OSError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"imported {result.imported}, absorbed {result.absorbed}, "
            f"already there {result.skipped}, queue items {result.conflicts}"
        )
