"""`manage.py import_from SYSTEM PATH --user NAME --scope ID [--dry-run]`: another system's file
(or folder) written into a scope as that user signed in (a writer of the scope), with every
check of the REST route but its per-request budget, printing its progress. Stopped, it is run
again the same way: what is in already is skipped (docs/import.md)."""

from __future__ import annotations

import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.portability.sources.registry import READERS
from memories.portability.sources.service import SourceImportReport, source_import
from scopes.access import writable_scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError

PROGRESS_SECONDS = 2.0


class Command(BaseCommand):
    help = "Import another memory system's file (mem0, Letta, supermemory, ...) into a scope."

    def add_arguments(self, parser) -> None:
        parser.add_argument("system", choices=sorted(READERS))
        parser.add_argument("path", help="The file (or folder) the system wrote.")
        parser.add_argument("--scope", required=True, help="The id of the scope to write.")
        parser.add_argument("--user", required=True, help="Who imports (a writer of the scope).")
        parser.add_argument(
            "--dry-run", action="store_true", help="Write nothing: say what would be done."
        )
        parser.add_argument(
            "--list", action="store_true", help="Print each record's outcome (the first 1000)."
        )

    def handle(self, *args, system: str, path: str, scope: str, user: str, **options) -> None:
        users = get_user_model()
        person = users.objects.filter(**{users.USERNAME_FIELD: user}, is_active=True).first()
        if person is None:
            raise CommandError(f"no active user named {user}")
        started = last = time.monotonic()

        def progress(report: SourceImportReport) -> None:
            nonlocal last
            if time.monotonic() - last >= PROGRESS_SECONDS:
                last = time.monotonic()
                rate = report.records / max(last - started, 1e-9)
                self.stderr.write(f"{self._counts(report)} ({rate:.0f} records/s)")

        try:
            actor = Actor(user=person, client_name=f"import_from {system}")
            target = writable_scope(actor, scope)
            folder = Path(path)
            if folder.is_dir():
                report = source_import(
                    actor=actor,
                    scope=target,
                    system=system,
                    source=folder,
                    dry_run=options["dry_run"],
                    progress=progress,
                )
            else:
                with folder.open("rb") as upload:
                    report = source_import(
                        actor=actor,
                        scope=target,
                        system=system,
                        source=upload,
                        dry_run=options["dry_run"],
                        progress=progress,
                    )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        except OSError as exc:
            raise CommandError(str(exc)) from None
        if options["list"]:
            for outcome in report.outcomes:
                reason = f"  {outcome.reason}" if outcome.reason else ""
                self.stdout.write(f"{outcome.outcome:8} {outcome.source_id}{reason}")
        prefix = "dry run: would have " if report.dry_run else ""
        self.stdout.write(f"{prefix}{self._counts(report)}")

    @staticmethod
    def _counts(report: SourceImportReport) -> str:
        return (
            f"records {report.records}: written {report.written}, absorbed {report.absorbed}, "
            f"refused {report.refused}, skipped {report.skipped}, "
            f"already there {report.already}, links {report.links}"
        )
