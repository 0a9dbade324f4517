"""`manage.py import PATH… --user NAME`: local agent memory files become memories, once.

A PATH is a file (CLAUDE.md, AGENTS.md, a .cursor/rules/*.mdc rule, a Claude Code memory file)
or a directory searched for them. A file named here is read wherever it is (the operator chose
it); a file found in a directory is not read through a link that leads out of that directory
(`memories.capture.tree`), and each such skip is printed with its reason. `--dry-run` lists what
would be written and what was imported before, and writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from memories.capture.importer import (
    SOURCE_TOOLS,
    import_plan,
    memory_import,
    pieces_of,
    source_tool_for,
)
from memories.capture.tree import Found, TreeWalk
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.errors import DomainError


def _kind(path: Path, tool: str | None) -> str | None:
    return tool or source_tool_for(path.as_posix())


def _files(
    paths: list[str], tool: str | None, write: Callable[[str], None]
) -> list[tuple[Found, str]]:
    found = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise CommandError(f"{raw}: no such file or directory")
        if not path.is_dir():
            found.append(Found(path, path))
            continue
        walk = TreeWalk(path, wanted=lambda candidate: _kind(candidate, tool) is not None)
        walk.add(path)
        for skipped, reason in walk.skipped:
            write(f"skipped {skipped}: {reason}")
        found += walk.found
    return [(file, kind) for file in found if (kind := _kind(file.path, tool)) is not None]


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
        files = _files(paths, tool, self.stdout.write)
        if not files:
            raise CommandError("No agent memory file found in the given paths.")
        imports = []
        for file, kind in files:  # every file is read and cut before anything is written
            arguments = {
                "source_tool": kind,
                "source_path": str(file.path),
                "content": file.real.read_text(encoding="utf-8", errors="replace"),
            }
            try:
                pieces_of(**arguments)
            except DomainError as exc:
                raise CommandError(f"{file.path}: {exc.message}") from None
            imports.append(arguments)
        for arguments in imports:
            path = arguments["source_path"]
            try:
                if dry_run:
                    for piece, done in import_plan(actor=actor, scope=scope, **arguments):
                        state = "imported before" if done else "would write"
                        self.stdout.write(f"{path}: {piece.kind} {piece.title!r}: {state}")
                    continue
                results = memory_import(actor=actor, scope=scope, **arguments)
            except DomainError as exc:
                raise CommandError(f"{path}: {exc.message}") from None
            for piece in results:
                self.stdout.write(f"{path}: {piece.kind} {piece.title!r}: {piece.outcome}")
