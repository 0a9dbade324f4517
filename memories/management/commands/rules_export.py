"""`manage.py rules_export --scope ID --format claude-md|agents-md|cursor-mdc [--output PATH]`:
a scope's approved rules, in their order, in the file a coding agent reads (memories/rules/
export.py), on standard output or into PATH. An operator's command: it reads the scope by id."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.approved_rules import approved_rules
from memories.rules.export import FORMATS, rules_file
from scopes.models import Scope


class Command(BaseCommand):
    help = "Write a scope's approved rules as CLAUDE.md, AGENTS.md or a Cursor rule."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--scope", required=True, help="the scope's id (scp_…)")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--output", help="a file to write (default: standard output)")

    def handle(self, *args, scope: str, format: str, output: str | None, **options) -> None:
        found = Scope.objects.filter(public_id=scope).first()
        if found is None:
            raise CommandError(f"No scope with id {scope}.")
        texts = [rule.text for rule in approved_rules([found.pk])]
        text = rules_file(format=format, scope=found.name, texts=texts)
        if output:
            Path(output).write_text(text, encoding="utf-8")
            self.stderr.write(f"{len(texts)} rules written to {output}")
        else:
            self.stdout.write(text, ending="")
