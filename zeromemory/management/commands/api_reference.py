"""Write docs/api.md, the REST API reference, from the OpenAPI schema (`--check`: only compare)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from zeromemory.api_reference import REFERENCE_PATH, REGENERATE, current_schema, render


class Command(BaseCommand):
    help = "Render the OpenAPI schema into docs/api.md; with --check, fail when the file is stale."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="compare only: exit 1 when docs/api.md differs"
        )

    def handle(self, *args, check: bool = False, **options) -> None:
        text = render(current_schema())
        current = REFERENCE_PATH.read_text(encoding="utf-8") if REFERENCE_PATH.exists() else ""
        if check:
            if current != text:
                raise CommandError(f"{REFERENCE_PATH} is stale: run `{REGENERATE}` and commit it.")
            self.stdout.write(f"{REFERENCE_PATH} is current.")
            return
        REFERENCE_PATH.write_text(text, encoding="utf-8")
        self.stdout.write(f"wrote {REFERENCE_PATH} ({text.count(chr(10))} lines)")
