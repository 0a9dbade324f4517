"""The activity log: one row per read or write, the query byte for byte, pruning, GET /activity."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from django_q.models import Schedule

from memories import tasks
from memories.activity.log import activity_prune
from memories.models import ActivityLog, Memory
from memories.recall.context import briefing
from memories.recall.recall import recall
from memories.services.remember import RememberInput, memory_remember_many
from scopes.models import ApiToken
from tests.factories import make_token
from zeromemory.core.actor import Actor

# Spanish and Japanese with a leading space, doubled and non-breaking spaces, a tab, an
# ideographic space, a decomposed accent (e + U+0301), an emoji with a skin-tone modifier and a
# zero-width joiner sequence, and a trailing newline: nothing of it may change on the way.
ODD_QUERY = (
    " ¿Dónde  está\tla configuracio\u0301n\u00a0del despliegue?  👩🏽‍💻 "
    "デプロイ設定はどこ？\u3000🚀\n"
)


def remember_all(user, items, *, scope=None):
    requests = [RememberInput(content=c, kind=k, scope=scope) for c, k in items]
    return [
        i.result.memory for i in memory_remember_many(actor=Actor(user=user), requests=requests)
    ]


@pytest.fixture
def seeded(tenancy):
    return remember_all(
        tenancy.owner,
        [
            ("Deployment settings live in deploy/config.yaml.", "reference"),
            ("Deploys need a green CI run on main.", "convention"),
        ],
        scope=tenancy.team.public_id,
    )


def test_the_query_is_logged_byte_for_byte(tenancy, api, seeded):
    client = api(tenancy.owner)
    response = client.post("/api/v1/recall", {"query": ODD_QUERY}, format="json")
    assert response.status_code == 200
    assert response.json()["query"] == ODD_QUERY
    row = ActivityLog.objects.get(operation="recall")
    assert row.query == ODD_QUERY
    assert row.query.encode("utf-8") == ODD_QUERY.encode("utf-8")
    with connection.cursor() as cursor:  # and in the database itself, not just the ORM's view
        cursor.execute(
            "SELECT convert_to(query, 'UTF8') FROM memories_activitylog WHERE operation = 'recall'"
        )
        assert bytes(cursor.fetchone()[0]) == ODD_QUERY.encode("utf-8")
    listed = client.get("/api/v1/activity").json()["results"][0]
    assert listed["query"] == ODD_QUERY

    context = client.post("/api/v1/context", {"topic": ODD_QUERY}, format="json")
    assert context.status_code == 200 and context.json()["topic"] == ODD_QUERY
    assert ActivityLog.objects.get(operation="build_context").query == ODD_QUERY


def test_every_operation_writes_one_row(tenancy, api, seeded):
    client = api(tenancy.owner)
    team = tenancy.team.public_id
    client.post(
        "/api/v1/recall", {"query": "deploy config", "scopes": [team], "k": 3}, format="json"
    )
    client.post("/api/v1/context", {"topic": "deploying", "max_tokens": 400}, format="json")
    client.get("/api/v1/briefing", {"max_tokens": 300})
    client.post(
        "/api/v1/memories",
        {"content": "Cut releases on Tuesdays.", "kind": "convention"},
        format="json",
    )
    rows = {row.operation: row for row in ActivityLog.objects.filter(token__isnull=False)}
    assert set(rows) == {"recall", "build_context", "briefing", "remember"}
    token = ApiToken.objects.get(user=tenancy.owner)
    for row in rows.values():
        assert (row.surface, row.user, row.token, row.outcome) == (
            "api",
            tenancy.owner,
            token,
            "hit",
        )
        assert row.latency_ms > 0 and row.error_code == ""
    recall_row = rows["recall"]
    assert recall_row.scopes == [team] and recall_row.options == {"k": 3, "kinds": None}
    assert {item["id"] for item in recall_row.results} == {m.public_id for m in seeded}
    assert all(isinstance(item["score"], float) for item in recall_row.results)
    assert rows["build_context"].options == {"max_tokens": 400}
    assert rows["remember"].results[0]["deduplicated"] is False
    assert rows["remember"].scopes == [tenancy.owner.owned_scopes.get(kind="personal").public_id]
    # The remember written before this test's client existed (the fixture) has its own row.
    assert ActivityLog.objects.filter(operation="remember", token__isnull=True).count() == 1


def test_empty_and_error_outcomes(tenancy, api):
    client = api(tenancy.outsider)
    assert client.post("/api/v1/recall", {"query": "anything"}, format="json").status_code == 200
    refused = client.post(
        "/api/v1/recall", {"query": "x", "scopes": [tenancy.team.public_id]}, format="json"
    )
    assert refused.status_code == 404
    reader_write = api(tenancy.reader).post(
        "/api/v1/memories",
        {"content": "x", "kind": "fact", "scope": tenancy.team.public_id},
        format="json",
    )
    assert reader_write.status_code == 403
    outcomes = list(
        ActivityLog.objects.order_by("public_id").values_list("operation", "outcome", "error_code")
    )
    assert outcomes == [
        ("recall", "empty", ""),
        ("recall", "error", "not_found"),
        ("remember", "error", "forbidden"),
    ]
    assert ActivityLog.objects.get(error_code="not_found").scopes == [tenancy.team.public_id]


def test_a_service_error_is_logged_with_the_query_as_sent(tenancy):
    with pytest.raises(Exception):  # noqa: B017 - the validation error is not the point here
        recall(actor=Actor(user=tenancy.owner, surface="mcp"), query="  ", k=5)
    row = ActivityLog.objects.get()
    assert (row.surface, row.query, row.outcome, row.error_code) == (
        "mcp",
        "  ",
        "error",
        "validation_failed",
    )


def test_no_secret_token_is_ever_logged(tenancy):
    from rest_framework.test import APIClient

    secret = make_token(tenancy.owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_USER_AGENT="agent/1.0")
    client.post("/api/v1/recall", {"query": "deploys"}, format="json")
    client.get("/api/v1/briefing")
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_jsonb(a)::text FROM memories_activitylog a")
        dumped = " ".join(text for (text,) in cursor.fetchall())
    assert secret not in dumped and secret[12:] not in dumped
    assert ActivityLog.objects.filter(client_name="agent/1.0").count() == 2


def test_activity_lists_only_the_callers_own_rows_with_filters_and_pages(tenancy, api, seeded):
    owner, outsider = api(tenancy.owner), api(tenancy.outsider)
    for i in range(5):
        owner.post("/api/v1/recall", {"query": f"deploy {i}"}, format="json")
    owner.post("/api/v1/recall", {"query": ""}, format="json")
    outsider.post("/api/v1/recall", {"query": "outsider query"}, format="json")

    rows = owner.get("/api/v1/activity", {"operation": "recall"}).json()["results"]
    assert [r["query"] for r in rows] == [
        "",
        "deploy 4",
        "deploy 3",
        "deploy 2",
        "deploy 1",
        "deploy 0",
    ]
    assert "outsider query" not in str(owner.get("/api/v1/activity").json())
    assert [r["query"] for r in outsider.get("/api/v1/activity").json()["results"]] == [
        "outsider query"
    ]
    errors = owner.get("/api/v1/activity", {"outcome": "error"}).json()["results"]
    assert [(r["query"], r["error_code"]) for r in errors] == [("", "validation_failed")]
    assert owner.get("/api/v1/activity", {"surface": "mcp"}).json()["results"] == []

    first = owner.get("/api/v1/activity", {"operation": "recall", "limit": 4}).json()
    second = owner.get(
        "/api/v1/activity", {"operation": "recall", "limit": 4, "cursor": first["next_cursor"]}
    ).json()
    assert len(first["results"]) == 4 and len(second["results"]) == 2
    assert second["next_cursor"] is None
    assert {r["id"] for r in first["results"]}.isdisjoint(r["id"] for r in second["results"])

    ActivityLog.objects.filter(query="deploy 0").update(
        created_at=timezone.now() - timedelta(days=3)
    )
    since = (timezone.now() - timedelta(days=1)).isoformat()
    recent = owner.get("/api/v1/activity", {"operation": "recall", "since": since}).json()
    assert "deploy 0" not in [r["query"] for r in recent["results"]]
    old = owner.get("/api/v1/activity", {"until": since}).json()["results"]
    assert [r["query"] for r in old] == ["deploy 0"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"operation": "delete"}, "operation"),
        ({"surface": "fax"}, "surface"),
        ({"outcome": "maybe"}, "outcome"),
        ({"since": "yesterday"}, "since"),
        ({"limit": "0"}, "limit"),
        ({"who": "me"}, "who"),
    ],
)
def test_activity_bad_filters_name_the_field(tenancy, api, params, field):
    response = api(tenancy.owner).get("/api/v1/activity", params)
    assert response.status_code == 400
    assert field in response.json()["error"]["details"]


def test_activity_for_reader_read_only_token_and_revoked_token(tenancy, api):
    from rest_framework.test import APIClient

    from scopes.services import token_create, token_revoke

    read_only = api(tenancy.owner, read_only=True)
    read_only.post("/api/v1/recall", {"query": "x"}, format="json")
    assert len(read_only.get("/api/v1/activity").json()["results"]) == 1
    assert api(tenancy.reader).get("/api/v1/activity").json()["results"] == []
    created = token_create(actor=Actor(user=tenancy.owner), name="t")
    token_revoke(actor=Actor(user=tenancy.owner), token=created.token)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    assert client.get("/api/v1/activity").status_code == 401


@override_settings(ACTIVITY_RETENTION_DAYS=30)
def test_pruning_drops_rows_older_than_the_retention(tenancy):
    for _ in range(3):
        recall(actor=Actor(user=tenancy.owner), query="q")
    old, edge, fresh = ActivityLog.objects.order_by("public_id")
    now = timezone.now()
    ActivityLog.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=31))
    ActivityLog.objects.filter(pk=edge.pk).update(created_at=now - timedelta(days=29))
    assert tasks.prune_activity() == 1
    assert set(ActivityLog.objects.values_list("pk", flat=True)) == {edge.pk, fresh.pk}
    assert activity_prune(now=now + timedelta(days=2)) == 1


def test_pruning_and_folding_are_scheduled(db):
    prune = Schedule.objects.get(func="memories.tasks.prune_activity")
    assert prune.schedule_type == Schedule.DAILY and prune.repeats == -1
    fold = Schedule.objects.get(func="memories.tasks.fold_recall_counts")
    assert (fold.schedule_type, fold.minutes, fold.repeats) == (Schedule.MINUTES, 1, -1)


def test_recall_leaves_memories_alone_and_the_fold_counts_each_recall_once(tenancy, seeded):
    actor = Actor(user=tenancy.owner)
    before = {m.pk: (m.updated_at, m.content, m.recall_count) for m in Memory.objects.all()}
    recall(actor=actor, query="deploy config")
    recall(actor=actor, query="deploy config", k=1)
    briefing(actor=actor)  # a briefing does not count as recalling
    after = {m.pk: (m.updated_at, m.content, m.recall_count) for m in Memory.objects.all()}
    assert after == before  # the read path wrote only its activity rows
    pending = ActivityLog.objects.exclude(pending_recalls=[])
    assert pending.count() == 2
    assert tasks.fold_recall_counts() == 2
    assert tasks.fold_recall_counts() == 0
    counts = sorted(Memory.objects.values_list("recall_count", flat=True))
    assert counts == [1, 2]
    assert not ActivityLog.objects.exclude(pending_recalls=[]).exists()
    for memory in Memory.objects.all():  # counting never touches anything else
        assert (memory.updated_at, memory.content) == before[memory.pk][:2]


@override_settings(ACTIVITY_RETENTION_DAYS=30)
def test_pruning_keeps_rows_whose_recalls_are_not_counted_yet(tenancy, seeded):
    recall(actor=Actor(user=tenancy.owner), query="deploy config")
    ActivityLog.objects.update(created_at=timezone.now() - timedelta(days=40))
    assert activity_prune() == 1  # the fixture's remember row
    assert ActivityLog.objects.get().operation == "recall"
    tasks.fold_recall_counts()
    assert activity_prune() == 1


def test_a_recall_row_counts_the_tokens_of_its_hits(tenancy, api, seeded):
    """The row's tokens are its hits' texts as the model's tokenizer counts them, one at a time
    (the row counts them together after the answer), repeated texts and new ones alike."""
    from memories.recall.budget import count_tokens

    client = api(tenancy.owner)
    for query in ("deploy settings", "deploy settings"):  # the second: counts already made
        response = client.post("/api/v1/recall", {"query": query}, format="json")
        assert response.status_code == 200
        hits = response.json()["results"]
        assert hits
        row = ActivityLog.objects.filter(operation="recall").order_by("-id").first()
        assert row.tokens == sum(count_tokens(hit["content"]) for hit in hits)
