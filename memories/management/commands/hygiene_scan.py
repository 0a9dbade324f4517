"""Run the hygiene scan now (the schedule runs it every ZM_HYGIENE_INTERVAL_MINUTES)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from memories.hygiene import scan, tasks


class Command(BaseCommand):
    help = "Pair the memories changed since the last scan with their neighbours; queue the pairs."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--judge-now",
            action="store_true",
            help="Also queue the due pairs for the judge at once (else the sweeper does).",
        )

    def handle(self, *args, judge_now: bool, **options) -> None:
        record = scan.hygiene_scan()
        queued = tasks.sweep_conflicts() if judge_now else 0
        self.stdout.write(
            f"{record.subjects} subjects, {record.pairs_found} pairs found, "
            f"{record.pairs_new} new, {queued} queued for the judge"
        )
