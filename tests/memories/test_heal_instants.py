"""The migration that heals instants stored before reads bounded their time arithmetic
(`0025_heal_instants`): instants before 2000 become the scope's creation, future ones now, a
period never ends before it starts, and plausible instants are left as they were."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from memories.models import Memory, MemoryVersion, UsageCounter, ValidityPeriod
from memories.services.lifecycle import memory_forget
from memories.services.remember import RememberInput, memory_remember
from tests.memories.migration_support import run_migration_step
from zeromemory.core.actor import Actor

YEAR_1 = datetime(1, 1, 1, tzinfo=UTC)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
YEAR_9999 = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
PLAUSIBLE = datetime(2024, 1, 2, tzinfo=UTC)


def _remember(tenancy, content: str) -> Memory:
    request = RememberInput(content=content, kind="task", scope=tenancy.team.public_id)
    return memory_remember(actor=Actor(user=tenancy.owner), request=request).memory


def _heal() -> None:
    run_migration_step("0025_heal_instants", "heal")


def test_heal_brings_stored_instants_into_what_the_server_could_have_seen(tenancy, kinds_seeded):
    scope_created = tenancy.team.created_at
    old = _remember(tenancy, "Rotate the staging certificate.")
    future = _remember(tenancy, "Renew the domain before it lapses.")
    ended = _remember(tenancy, "Page the on-call engineer on Fridays.")
    plausible = _remember(tenancy, "Archive the 2024 logs.")
    memory_forget(actor=Actor(user=tenancy.owner), memory=ended, reason="Stopped.")
    Memory.objects.filter(pk=old.pk).update(
        created_at=EPOCH, valid_from=YEAR_1, confirmed_at=YEAR_1, last_recalled_at=EPOCH
    )
    ValidityPeriod.objects.filter(memory=old).update(valid_from=YEAR_1)
    MemoryVersion.objects.create(
        memory=old, number=1, kind_id="task", content="Before.", created_at=YEAR_1
    )
    UsageCounter.objects.create(memory=old, uses=3, last_used_at=YEAR_1)
    Memory.objects.filter(pk=future.pk).update(created_at=YEAR_9999, valid_from=YEAR_9999)
    ValidityPeriod.objects.filter(memory=future).update(valid_from=YEAR_9999)
    UsageCounter.objects.create(memory=future, uses=1, last_used_at=YEAR_9999)
    until = EPOCH + timedelta(seconds=1)
    Memory.objects.filter(pk=ended.pk).update(
        created_at=EPOCH, valid_from=EPOCH, valid_until=until, forgotten_at=until
    )
    ValidityPeriod.objects.filter(memory=ended).update(valid_from=EPOCH, valid_until=until)
    Memory.objects.filter(pk=plausible.pk).update(created_at=PLAUSIBLE, valid_from=PLAUSIBLE)
    ValidityPeriod.objects.filter(memory=plausible).update(valid_from=PLAUSIBLE)
    before = timezone.now()

    _heal()

    old.refresh_from_db()
    assert old.created_at == old.valid_from == old.confirmed_at == scope_created
    assert old.last_recalled_at == scope_created
    assert old.validity_periods.get().valid_from == scope_created
    assert old.versions.get().created_at == scope_created
    assert UsageCounter.objects.get(memory=old).last_used_at == scope_created
    future.refresh_from_db()
    assert before <= future.created_at == future.valid_from <= timezone.now()
    assert future.validity_periods.get().valid_from == future.valid_from
    assert before <= UsageCounter.objects.get(memory=future).last_used_at <= timezone.now()
    ended.refresh_from_db()
    assert ended.valid_from == ended.valid_until == ended.forgotten_at == scope_created
    period = ended.validity_periods.get()
    assert period.valid_from == period.valid_until == scope_created
    plausible.refresh_from_db()
    assert plausible.created_at == plausible.valid_from == PLAUSIBLE
    assert plausible.validity_periods.get().valid_from == PLAUSIBLE
