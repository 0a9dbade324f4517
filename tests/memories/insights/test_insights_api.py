"""GET /api/v1/insights: every figure of the answer against known, folded rows; who sees what."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memories import spend
from memories.insights.fold import insights_fold
from scopes.erasure import account_delete
from tests.factories import make_scope
from tests.memories.insights.support import ENGLISH_QUERY, GERMAN_QUERY, activity, seed, stored
from zeromemory.core.actor import Actor

PASSWORD = "correct horse battery"  # every factory user's


@pytest.fixture
def seeded(tenancy, kinds_seeded):
    return seed(tenancy)


def insights(tenancy, user, days=7, **token):
    response = tenancy.client(user, **token).get(
        "/api/v1/insights", {"scope": tenancy.team.public_id, "days": days}
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_every_figure_of_the_answer(tenancy, seeded, settings):
    body = insights(tenancy, tenancy.owner)
    assert (body["scope"], body["days"]) == (tenancy.team.public_id, 7)
    assert body["until"] == spend.today().isoformat()
    assert body["since"] == (spend.today() - timedelta(days=6)).isoformat()

    assert body["value"] == {
        "recalls": 4,  # today's three (two of them empty) and one three days ago
        "contexts": 1,
        "briefings": 1,
        "memories_served": 5,
        "tokens_served": 90,
        "sessions": 2,
        "clients": 2,
        "written": {"human": 2, "agent": 1, "capture": 1},
    }
    daily = {day["day"]: day for day in body["daily"]}
    assert len(daily) == 7
    today = daily[spend.today().isoformat()]
    assert today == {
        "day": spend.today().isoformat(),
        "recalls": 3,
        "contexts": 1,
        "briefings": 1,
        "empty_reads": 2,
        "memories_served": 4,
        "tokens_served": 75,
        "written": 4,
    }
    earlier = daily[(spend.today() - timedelta(days=3)).isoformat()]
    assert (earlier["recalls"], earlier["memories_served"], earlier["tokens_served"]) == (1, 1, 15)
    assert sum(day["recalls"] for day in body["daily"]) == 4

    quality = body["quality"]
    assert (quality["reads"], quality["empty_reads"], quality["empty_rate"]) == (5, 2, 0.4)
    assert [(q["query"], q["by"], q["not_english"]) for q in quality["empty_queries"]] == [
        (ENGLISH_QUERY, "writer", False),
        (GERMAN_QUERY, "reader", True),
    ]
    assert quality["empty_queries"][1]["lang"] == "de"
    assert quality["empty_queries_of_others_hidden"] is False
    assert [(m["id"], m["times"]) for m in quality["most_recalled"]] == [
        (seeded.old_used.public_id, 3),
        (seeded.by_agent.public_id, 2),
    ]
    assert quality["never_recalled"] == 1
    assert [m["id"] for m in quality["never_recalled_sample"]] == [seeded.old_unused.public_id]
    assert quality["disputed"] == 2
    assert {m["id"] for m in quality["disputed_sample"]} == {
        seeded.by_agent.public_id,
        seeded.by_capture.public_id,
    }

    health = body["health"]
    assert health["review_open"] == 1 and 1.9 <= health["review_oldest_days"] <= 2.1
    assert health["translations"] == {"pending": 1, "failed": 1}
    assert health["extractions"] == {"pending": 1, "failed": 1}
    assert health["judgements"] == {"pending": 1, "failed": 1}
    assert health["capture"] == {
        "chunks": 2,
        "kept": 2,
        "dropped": {"low_confidence": 3, "no_evidence": 1},
    }

    cost = {path["path"]: path for path in body["cost"]}
    assert (cost["judge"]["tokens"], cost["judge"]["calls"]) == (1200, 2)
    assert cost["judge"]["budget_per_day"] == settings.HYGIENE_DAILY_TOKENS
    assert cost["judge"]["days"][-1] == {
        "day": spend.today().isoformat(),
        "tokens": 1200,
        "calls": 2,
    }
    assert (cost["translation"]["tokens"], cost["translation"]["calls"]) == (500, 1)
    assert cost["translation"]["budget_per_day"] == settings.TRANSLATION_DAILY_TOKENS
    assert cost["extraction"]["tokens"] == 0 and cost["extraction"]["budget_per"] == "user"
    assert all(len(path["days"]) == 7 for path in body["cost"])


def test_a_fold_run_twice_counts_once(tenancy, seeded):
    insights_fold(days=7)
    assert insights(tenancy, tenancy.owner)["value"]["recalls"] == 4
    assert len(insights(tenancy, tenancy.owner)["quality"]["empty_queries"]) == 2


def test_a_new_read_counts_after_the_next_fold(tenancy, seeded):
    activity(tenancy.writer, "recall", results=[seeded.by_agent], scopes=[tenancy.team.public_id])
    assert insights(tenancy, tenancy.owner)["value"]["recalls"] == 4
    insights_fold()
    assert insights(tenancy, tenancy.owner)["value"]["recalls"] == 5


def test_the_period_bounds_the_figures(tenancy, seeded):
    old = stored(tenancy.team, "An old note.")
    activity(tenancy.writer, "recall", results=[old], scopes=[tenancy.team.public_id],
             ago=timedelta(days=20))  # fmt: skip
    insights_fold(days=30)
    assert insights(tenancy, tenancy.owner, days=7)["value"]["recalls"] == 4
    assert insights(tenancy, tenancy.owner, days=30)["value"]["recalls"] == 5
    assert len(insights(tenancy, tenancy.owner, days=90)["daily"]) == 90


def test_sessions_and_clients_count_once_in_each_period_they_fall_in(tenancy, seeded):
    # conv-1 (claude-code) again 20 days ago, and conv-9 (cursor) only then.
    for conversation, client in (("conv-1", "claude-code"), ("conv-9", "cursor")):
        activity(tenancy.writer, "recall", results=[seeded.by_agent],
                 scopes=[tenancy.team.public_id], conversation_id=conversation,
                 client_name=client, ago=timedelta(days=20))  # fmt: skip
    insights_fold(days=30)
    week = insights(tenancy, tenancy.owner, days=7)["value"]
    month = insights(tenancy, tenancy.owner, days=30)["value"]
    assert (week["sessions"], week["clients"]) == (2, 2)
    assert (month["sessions"], month["clients"]) == (3, 3)
    # A later fold of the older day alone leaves the newer days' sessions counted.
    insights_fold(days=1, today=spend.today() - timedelta(days=20))
    assert insights(tenancy, tenancy.owner, days=7)["value"]["sessions"] == 2
    assert insights(tenancy, tenancy.owner, days=30)["value"]["sessions"] == 3


def test_erased_reads_leave_the_visitor_counts_at_the_next_fold(tenancy, seeded):
    # The writer's recall today was the only one of conv-1 and of claude-code this week; the
    # owner's conv-1 20 days ago stays.
    activity(tenancy.owner, "recall", results=[seeded.by_agent], scopes=[tenancy.team.public_id],
             conversation_id="conv-1", ago=timedelta(days=20))  # fmt: skip
    insights_fold(days=30)
    account_delete(actor=Actor(user=tenancy.writer), password=PASSWORD)
    insights_fold()
    week = insights(tenancy, tenancy.owner)["value"]
    assert (week["sessions"], week["clients"]) == (1, 1)
    assert insights(tenancy, tenancy.owner, days=30)["value"]["sessions"] == 2


def test_the_migration_fills_the_last_visits_from_the_daily_rows(tenancy, seeded):
    import importlib

    from django.db import connection

    from memories.models import LastVisit

    activity(tenancy.owner, "recall", results=[seeded.by_agent], scopes=[tenancy.team.public_id],
             conversation_id="conv-9", ago=timedelta(days=20))  # fmt: skip
    insights_fold(days=30)
    folded = [insights(tenancy, tenancy.owner, days=days)["value"] for days in (7, 30)]
    LastVisit.objects.all().delete()  # as before 0022
    with connection.cursor() as cursor:
        cursor.execute(importlib.import_module("memories.migrations.0022_cheaper_insights").FILL)
    assert [insights(tenancy, tenancy.owner, days=days)["value"] for days in (7, 30)] == folded
    assert (folded[0]["sessions"], folded[1]["sessions"]) == (2, 3)


def test_a_member_who_is_not_an_admin_sees_only_their_own_empty_queries(tenancy, seeded):
    reader = insights(tenancy, tenancy.reader)["quality"]
    assert [q["query"] for q in reader["empty_queries"]] == [GERMAN_QUERY]
    assert reader["empty_queries_of_others_hidden"] is True
    writer = insights(tenancy, tenancy.writer)["quality"]
    assert [q["query"] for q in writer["empty_queries"]] == [ENGLISH_QUERY]
    # The other figures are the scope's, the same for every member.
    assert insights(tenancy, tenancy.reader)["value"] == insights(tenancy, tenancy.owner)["value"]


def test_an_outsider_gets_404(tenancy, seeded):
    response = tenancy.client(tenancy.outsider).get(
        "/api/v1/insights", {"scope": tenancy.team.public_id}
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_token_restricted_to_another_scope_gets_404(tenancy, seeded):
    other = make_scope(owner=tenancy.owner, slug="other")
    client = tenancy.client(tenancy.owner, scopes=[other])
    response = client.get("/api/v1/insights", {"scope": tenancy.team.public_id})
    assert response.status_code == 404
    assert client.get("/api/v1/insights", {"scope": other.public_id}).status_code == 200


@pytest.mark.parametrize("days", ["1", "31", "abc", ""])
def test_days_other_than_7_30_or_90_are_refused(tenancy, seeded, days):
    response = tenancy.client(tenancy.owner).get(
        "/api/v1/insights", {"scope": tenancy.team.public_id, "days": days}
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_failed"


def test_the_scope_is_required(tenancy, seeded):
    response = tenancy.client(tenancy.owner).get("/api/v1/insights")
    assert response.status_code == 400
