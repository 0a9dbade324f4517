"""`manage.py bootstrap REPO --user NAME`: a repository's documents and history through ingest,
with a progress bar; `--dry-run` asks the ledger and prints what is new. A document reached
through a link out of the repository is skipped, and the skip printed with its reason."""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from memories.capture.bootstrap import document_files, documents, history
from memories.capture.ingest import IngestInput, chunk_ingest
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.errors import DomainError


class Command(BaseCommand):
    help = "Send a repository's README and docs (documents) and git log (history) to ingest."

    def add_arguments(self, parser) -> None:
        parser.add_argument("repo", help="the repository's folder")
        parser.add_argument("--user", required=True, help="the user the chunks belong to")
        parser.add_argument("--scope", help="a scope id (default: the user's personal scope)")
        kinds = parser.add_mutually_exclusive_group()
        kinds.add_argument("--docs-only", action="store_true")
        kinds.add_argument("--history-only", action="store_true")
        parser.add_argument("--dry-run", action="store_true", help="ask the ledger, send nothing")

    def handle(self, *args, repo, user, scope, docs_only, history_only, dry_run, **options):
        root = Path(repo)
        if not root.is_dir():
            raise CommandError(f"{repo}: not a directory")
        account = get_user_model().objects.filter(username=user, is_active=True).first()
        if account is None:
            raise CommandError(f"No active user named {user}.")
        actor = Actor(user=account, surface=Surface.CAPTURE, client_name="bootstrap")
        chunks = []
        if not history_only:
            walk = document_files(root)
            for path, reason in walk.skipped:
                self.stdout.write(f"skipped {path.relative_to(root).as_posix()}: {reason}")
            chunks += documents(root, walk.found)
        if not docs_only and (root / ".git").exists():
            chunks += list(history(root))
        new = known = 0
        for chunk in tqdm(chunks, desc="bootstrap", unit="chunk", disable=None):
            request = IngestInput(
                source_kind=chunk.source_kind,
                content=None if dry_run else chunk.content,
                chunk_hash=hashlib.sha256(chunk.content.encode("utf-8")).hexdigest(),
                client="bootstrap",
                source_path=chunk.source_path,
                scope=scope,
                probe=dry_run,
            )
            try:
                ingested = chunk_ingest(actor=actor, request=request)
            except DomainError as exc:
                raise CommandError(f"{chunk.source_path}: {exc.message}") from None
            if ingested.duplicate:
                known += 1
            else:
                new += 1
                if dry_run:
                    self.stdout.write(f"new: {chunk.source_kind} {chunk.source_path}")
        verb = "would send" if dry_run else "sent"
        self.stdout.write(f"{verb} {new} new chunks; {known} already known")
