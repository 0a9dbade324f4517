"""Usage feedback in the benches: agents report (mark_used) what helped them, and recall is
measured again in the same run.

The questions are split in two: agents answer the even-numbered ones and report, each in a
conversation of its own, the relevant memories they found among their hits; the odd-numbered ones
are held out. Before and after are the same questions on the same database, before any report and
after all of them: the held-out half shows whether memories boosted for other questions crowd out
the right ones, the reported half what the boost gives back.
"""

from __future__ import annotations


def reported_and_held_out(items: list) -> tuple[list[int], list[int]]:
    return list(range(0, len(items), 2)), list(range(1, len(items), 2))


def clear_usage() -> None:
    """Leave no reports behind (the LoCoMo data directory is reused between runs)."""
    from memories.models import ReportedUse, Rule, UsageCounter

    Rule.objects.all().delete()
    ReportedUse.objects.all().delete()
    UsageCounter.objects.all().delete()
