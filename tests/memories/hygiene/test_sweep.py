"""The sweeper tops the queue up instead of piling onto a backlog: rows whose tasks still wait
past their lease are not queued a second time, and a little always goes in."""

from __future__ import annotations

from dataclasses import replace

from django_q.models import OrmQ
from django_q.tasks import async_task

from memories.hygiene import service
from memories.models import Conflict, ConflictStatus
from tests.memories.hygiene.support import write


def test_the_sweeper_tops_the_queue_up_rather_than_piling_on(tenancy, kinds_seeded, settings):
    settings.ANTHROPIC_API_KEY = "test-key"
    first = write(tenancy.owner, "The staging database is reset every Monday.", tenancy.team)
    for n in range(6):
        other = write(tenancy.owner, f"Service {n} deploys on Fridays.", tenancy.team)
        Conflict.objects.create(
            scope=tenancy.team, memory_a=first, memory_b=other, status=ConflictStatus.PENDING
        )
    judging = replace(service.JUDGING, batch=10)
    for _ in range(10):  # a backlog of other work already fills the queue
        async_task("math.floor", 1.5)

    assert judging.sweep() == 1  # a tenth of the batch still goes in
    assert OrmQ.objects.count() == 11
    OrmQ.objects.all().delete()  # the worker took them
    assert judging.sweep() == 5  # the rest, now that there is room
    claimed = Conflict.objects.exclude(claim="")
    # The five go in one task: the pairs of one scope are judged a call's worth at a time.
    [queued] = OrmQ.objects.all()
    assert claimed.count() == 6 and queued.task["func"] == service.JUDGING.many_task
    assert len(queued.task["args"][0]) == 5
