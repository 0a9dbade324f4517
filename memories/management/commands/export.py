"""`manage.py export SCOPE_ID… --out FILE`: scopes as a zip in the export format.

The operator of the server exports any scope by its id (as staff see every scope in the admin);
the file is written as the archive is produced, so memory use stays small at any size.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from memories.portability.export import export_archive
from scopes.models import Scope


class Command(BaseCommand):
    help = "Export scopes (by id) as a zip in the zero-memory export format."

    def add_arguments(self, parser) -> None:
        parser.add_argument("scopes", nargs="+", metavar="SCOPE_ID")
        parser.add_argument("--out", required=True, help="The zip file to write.")

    def handle(self, *args, scopes: list[str], out: str, **options) -> None:
        found = list(Scope.objects.filter(public_id__in=scopes))
        missing = sorted(set(scopes) - {scope.public_id for scope in found})
        if missing:
            raise CommandError(f"no scope with id {', '.join(missing)}")
        size = 0
        with open(out, "wb") as file:
            for part in export_archive(scopes=found):
                file.write(part)
                size += len(part)
        self.stdout.write(f"wrote {out} ({size} bytes, {len(found)} scopes)")
