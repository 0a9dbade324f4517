"""`manage.py import PATH… --user NAME`: local agent memory files become memories, once.

A PATH is a file (CLAUDE.md, AGENTS.md, a .cursor/rules/*.mdc rule, a Claude Code memory file)
or a directory searched for them. `--dry-run` lists what would be written and what was imported
before, and writes nothing.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.capture.importer import SOURCE_TOOLS, import_plan, memory_import, source_tool_for
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.errors import DomainError


def _files(paths: list[str], tool: str | None) -> list[tuple[Path, str]]:
    found = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise CommandError(f"{raw}: no such file or directory")
        candidates = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for candidate in candidates:
            kind = tool or source_tool_for(candidate.as_posix())
            if kind is not None:
                found.append((candidate, kind))
    return found


class Command(BaseCommand):
    help = "Import CLAUDE.md, AGENTS.md, Cursor rules and Claude Code memory files as memories."

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", nargs="+", help="files or directories")
        parser.add_argument("--user", required=True, help="the user the memories belong to")
        parser.add_argument("--scope", help="a scope id (default: the user's personal scope)")
        parser.add_argument("--tool", choices=SOURCE_TOOLS, help="the format, when not by name")
        parser.add_argument("--dry-run", action="store_true", help="list, write nothing")

    def handle(self, *args, paths, user, scope, tool, dry_run, **options) -> None:
        account = get_user_model().objects.filter(username=user, is_active=True).first()
        if account is None:
            raise CommandError(f"No active user named {user}.")
        actor = Actor(user=account, surface=Surface.CAPTURE, client_name="import")
        files = _files(paths, tool)
        if not files:
            raise CommandError("No agent memory file found in the given paths.")
        for path, kind in files:
            content = path.read_text(encoding="utf-8", errors="replace")
            try:
                if dry_run:
                    for piece, done in import_plan(
                        actor=actor,
                        source_tool=kind,
                        source_path=str(path),
                        content=content,
                        scope=scope,
                    ):
                        state = "imported before" if done else "would write"
                        self.stdout.write(f"{path}: {piece.kind} {piece.title!r}: {state}")
                    continue
                results = memory_import(
                    actor=actor,
                    source_tool=kind,
                    source_path=str(path),
                    content=content,
                    scope=scope,
                )
            except DomainError as exc:
                raise CommandError(f"{path}: {exc.message}") from None
            for piece in results:
                self.stdout.write(f"{path}: {piece.kind} {piece.title!r}: {piece.outcome}")
