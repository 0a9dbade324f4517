"""The migration that brings usage and insights under issue 37's rules
(`0024_rules_and_insights_scoped`): a counter raised by forged light reports comes down to what
the stored uses allow, and a team's "found nothing" rows from reads that did not name the team go.
"""

from __future__ import annotations

from memories.models import EmptyRead, Memory, ReportedUse, UsageCounter
from memories.services.remember import RememberInput, memory_remember
from tests.memories.insights.support import activity
from tests.memories.migration_support import run_migration_step
from zeromemory.core.actor import Actor


def _heal() -> None:
    run_migration_step("0024_rules_and_insights_scoped", "heal")


def _remember(tenancy, content: str) -> Memory:
    request = RememberInput(content=content, kind="convention", scope=tenancy.team.public_id)
    return memory_remember(actor=Actor(user=tenancy.owner), request=request).memory


def test_heal_lowers_forged_usage_and_drops_misattributed_empty_reads(tenancy, kinds_seeded):
    forged = _remember(tenancy, "Tag every release in the changelog.")
    earned = _remember(tenancy, "Review schema changes with the data team.")
    # Thirty reports of a reader (before the fix, each one lifted the counter).
    for n in range(30):
        ReportedUse.objects.create(
            memory=forged, conversation=f"made-up-{n}", used_by=tenancy.reader
        )
    UsageCounter.objects.create(memory=forged, uses=30)
    # A writer's own five conversations: they keep their weight.
    for n in range(5):
        ReportedUse.objects.create(memory=earned, conversation=f"real-{n}", used_by=tenancy.writer)
    UsageCounter.objects.create(memory=earned, uses=5)

    team = tenancy.team.public_id
    everywhere = activity(tenancy.outsider, "recall", query="the outsider's private question")
    named = activity(tenancy.reader, "recall", scopes=[team], query="release tags")
    for read in (everywhere, named):
        EmptyRead.objects.create(
            scope=tenancy.team, activity=read, user=read.user, operation="recall", query=read.query
        )

    _heal()

    assert UsageCounter.objects.get(memory=forged).uses == 3
    assert UsageCounter.objects.get(memory=earned).uses == 5
    assert ReportedUse.objects.filter(memory=earned, full_weight=True).count() == 5
    assert list(EmptyRead.objects.values_list("query", flat=True)) == ["release tags"]
