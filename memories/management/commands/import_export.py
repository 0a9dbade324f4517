"""`manage.py import_export FILE --scope ID --user NAME`: an export written into a scope, as
that user (who must be able to write the scope), with every check of the REST import."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.portability.archive import read_archive
from memories.portability.restore import archive_import
from scopes.access import writable_scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError


class Command(BaseCommand):
    help = "Import a zero-memory export (a zip) into a scope."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file")
        parser.add_argument("--scope", required=True, help="The id of the scope to write.")
        parser.add_argument("--user", required=True, help="Who imports (a writer of the scope).")

    def handle(self, *args, file: str, scope: str, user: str, **options) -> None:
        users = get_user_model()
        person = users.objects.filter(**{users.USERNAME_FIELD: user}, is_active=True).first()
        if person is None:
            raise CommandError(f"no active user named {user}")
        try:
            target = writable_scope(Actor(user=person), scope)
            with open(file, "rb") as upload:
                result = archive_import(scope=target, archive=read_archive(upload))
        except DomainError as exc:
            raise CommandError(exc.message) from None
        except OSError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"imported {result.imported}, absorbed {result.absorbed}, "
            f"already there {result.skipped}, queue items {result.conflicts}"
        )
