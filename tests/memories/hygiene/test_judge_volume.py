"""Fewer and fairer judge calls: pairs of one scope share a call (one forced answer each), pairs
of the same text once normalized need none, the queue takes turns across owners and scopes, and
a scope over its daily judge budget waits for the next day. The memories are stored without
embeddings: the judge reads only their text."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memories import spend
from memories.hygiene import service, tasks
from memories.models import Conflict, ConflictStatus, LlmPath, LlmSpend, Memory
from tests.factories import UserFactory, make_scope, stored_memory
from tests.memories.hygiene.support import relations


def stored(scope, content: str, *, author: str = "human", kind: str = "fact") -> Memory:
    return stored_memory(scope, content, author=author, kind=kind)


def queued(scope, count: int, *, prefix: str = "Fact") -> list[Conflict]:
    """`count` pending pairs of distinct texts in the scope, oldest first."""
    pairs = []
    for number in range(count):
        a = stored(scope, f"{prefix} {number}: the {scope.slug} cache holds {number} entries.")
        b = stored(scope, f"{prefix} {number}: {number} entries sit in the {scope.slug} cache.")
        pairs.append(
            Conflict.objects.create(
                scope=scope, memory_a=a, memory_b=b, status=ConflictStatus.PENDING
            )
        )
    return pairs


@pytest.fixture
def team(tenancy, kinds_seeded):
    return tenancy.team


def test_pairs_of_one_scope_share_one_call_with_an_answer_for_each(
    team, fake_anthropic, sync_tasks, settings
):
    settings.HYGIENE_PAIRS_PER_CALL = 10
    first, second, third = queued(team, 3)
    fake_anthropic.script(
        relations(("duplicate", 0.95), ("contradiction", 0.8), ("unrelated", 0.9))
    )
    assert tasks.sweep_conflicts() == 3
    [request] = fake_anthropic.requests
    prompt = request.json["messages"][0]["content"]
    assert prompt.count("<pair number=") == 3
    assert request.json["tool_choice"] == {"type": "tool", "name": "record_relations"}
    for conflict in (first, second, third):
        conflict.refresh_from_db()
    assert (first.status, first.verdict) == (ConflictStatus.RESOLVED, "duplicate")
    assert (second.status, second.verdict) == (ConflictStatus.OPEN, "contradiction")
    assert (third.status, third.verdict) == (ConflictStatus.CLEARED, "unrelated")
    # The call's tokens are the scope's judge spend of the day.
    [row] = LlmSpend.objects.filter(scope=team, path=LlmPath.JUDGE)
    assert row.calls == 1 and row.tokens > 0 and row.day == spend.today()


def test_more_pairs_than_a_call_holds_make_several_calls(
    team, fake_anthropic, sync_tasks, settings
):
    settings.HYGIENE_PAIRS_PER_CALL = 2
    queued(team, 5)
    fake_anthropic.script(
        relations(("unrelated", 0.9), ("unrelated", 0.9)),
        relations(("unrelated", 0.9), ("unrelated", 0.9)),
        relations(("unrelated", 0.9)),
    )
    assert tasks.sweep_conflicts() == 5
    sizes = [
        r.json["messages"][0]["content"].count("<pair number=") for r in fake_anthropic.requests
    ]
    assert sizes == [2, 2, 1]
    assert Conflict.objects.filter(status=ConflictStatus.CLEARED).count() == 5


def test_a_pair_the_answer_leaves_out_is_retried_alone(team, fake_anthropic, sync_tasks):
    first, second = queued(team, 2)
    fake_anthropic.script(relations(("complementary", 0.9)))  # pair 2 has no entry
    tasks.sweep_conflicts()
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == ConflictStatus.CLEARED
    assert second.status == ConflictStatus.PENDING and second.attempts == 1 and second.error
    assert second.next_at > timezone.now()


def test_the_same_text_once_normalized_needs_no_call(team, fake_anthropic, sync_tasks):
    a = stored(team, "Run the migrations with `make migrate` before a deploy.", author="capture")
    b = stored(team, "run the migrations with make migrate before a deploy", author="agent")
    conflict = Conflict.objects.create(
        scope=team, memory_a=a, memory_b=b, status=ConflictStatus.PENDING
    )
    assert tasks.sweep_conflicts() == 1
    assert fake_anthropic.requests == []
    conflict.refresh_from_db()
    a.refresh_from_db()
    assert conflict.status == ConflictStatus.RESOLVED and conflict.verdict == "duplicate"
    assert not a.valid and a.superseded_by_id == b.pk  # capture ranks below an agent


def test_texts_that_differ_in_a_word_still_go_to_the_judge(team, fake_anthropic, sync_tasks):
    a = stored(team, "The request timeout is 30 seconds.")
    b = stored(team, "The request timeout is 45 seconds.")
    Conflict.objects.create(scope=team, memory_a=a, memory_b=b, status=ConflictStatus.PENDING)
    fake_anthropic.script(relations(("contradiction", 0.8)))
    tasks.sweep_conflicts()
    assert len(fake_anthropic.requests) == 1


def test_a_bulk_import_does_not_hold_back_another_scope(tenancy, kinds_seeded, fake_anthropic):
    """Thirty older pairs of one owner's scope, then two of another owner's: the first claim
    of ten takes both of the second, and the importer's next ones after them."""
    importer = tenancy.team
    other_owner = UserFactory()
    other = make_scope(owner=other_owner, slug="other")
    bulk = queued(importer, 30, prefix="Imported")
    fresh = queued(other, 2)
    claimed = [row_id for row_id, _ in service.due_conflicts(limit=10)]
    assert {conflict.id for conflict in fresh} <= set(claimed)
    assert len(claimed) == 10
    assert set(claimed) - {c.id for c in fresh} == {c.id for c in bulk[:8]}


def test_an_owner_with_many_scopes_gets_one_turn_like_an_owner_with_one(
    tenancy, kinds_seeded, fake_anthropic, settings
):
    settings.HYGIENE_PAIRS_PER_CALL = 1
    many = [make_scope(owner=tenancy.owner, slug=f"s{number}") for number in range(4)]
    for scope in many:
        queued(scope, 3)
    lone = make_scope(owner=UserFactory(), slug="lone")
    lone_pairs = queued(lone, 3)
    claimed = [row_id for row_id, _ in service.due_conflicts(limit=6)]
    # Round robin over the two owners: three turns each.
    assert len(set(claimed) & {c.id for c in lone_pairs}) == 3


def test_a_scope_over_its_judge_budget_waits_for_the_next_day(
    team, fake_anthropic, sync_tasks, settings
):
    settings.HYGIENE_DAILY_TOKENS = 1000
    LlmSpend.objects.create(scope=team, path=LlmPath.JUDGE, day=spend.today(), tokens=1000, calls=3)
    [conflict] = queued(team, 1)
    tasks.sweep_conflicts()
    assert fake_anthropic.requests == []
    conflict.refresh_from_db()
    assert conflict.status == ConflictStatus.PENDING and conflict.attempts == 0
    assert conflict.next_at == spend.next_utc_day() and "budget" in conflict.error
    assert service.due_conflicts() == []  # not before tomorrow
    # Yesterday's spend does not count today.
    LlmSpend.objects.filter(scope=team).update(day=spend.today() - timedelta(days=1))
    Conflict.objects.filter(pk=conflict.pk).update(next_at=None)
    fake_anthropic.script(relations(("unrelated", 0.9)))
    tasks.sweep_conflicts()
    conflict.refresh_from_db()
    assert conflict.status == ConflictStatus.CLEARED


def test_another_scope_of_the_same_owner_keeps_its_own_budget(
    tenancy, kinds_seeded, fake_anthropic, sync_tasks, settings
):
    settings.HYGIENE_DAILY_TOKENS = 1000
    spent = tenancy.team
    LlmSpend.objects.create(scope=spent, path=LlmPath.JUDGE, day=spend.today(), tokens=5000)
    other = make_scope(owner=tenancy.owner, slug="second")
    [waiting] = queued(spent, 1)
    [judged] = queued(other, 1)
    fake_anthropic.script(relations(("unrelated", 0.9)))
    tasks.sweep_conflicts()
    waiting.refresh_from_db()
    judged.refresh_from_db()
    assert waiting.status == ConflictStatus.PENDING
    assert judged.status == ConflictStatus.CLEARED


def test_a_backlog_is_judged_at_the_workers_pace_not_the_sweepers(team, fake_anthropic, settings):
    """After a call the next call's worth of due pairs is queued at once while the queue has
    room (fewer tasks than the worker's processes); with a full queue nothing more goes in."""
    from django_q.models import OrmQ
    from django_q.tasks import async_task

    settings.HYGIENE_PAIRS_PER_CALL = 5
    settings.Q_WORKERS = 2
    pairs = queued(team, 12)
    unrelated = [("unrelated", 0.9)] * 5
    fake_anthropic.script(relations(*unrelated), relations(*unrelated))

    tasks.judge_many(service.due_conflicts(limit=5))
    [follow_up] = OrmQ.objects.all()
    assert follow_up.func() == "memories.hygiene.tasks.judge_many"
    claims = follow_up.task["args"][0]
    assert len(claims) == 5
    assert {row_id for row_id, _ in claims} <= {pair.pk for pair in pairs[5:]}

    async_task("math.floor", 1.5)  # the queue now holds as many tasks as the worker has processes
    tasks.judge_many(claims)
    assert OrmQ.objects.count() == 2
    judged = Conflict.objects.filter(status=ConflictStatus.CLEARED).count()
    assert judged == 10 and len(fake_anthropic.requests) == 2
    assert Conflict.objects.filter(status=ConflictStatus.PENDING, claim="").count() == 2
