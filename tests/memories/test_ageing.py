"""Ageing by kind: a memory not recalled, confirmed or written within its kind's half-life is
marked stale in answers (never hidden); a recall, a write saying the same again, an edit or a
restore makes it fresh. The decay of the score uses the kind's half-life, edited by staff."""

from __future__ import annotations

import pytest

from memories import tasks
from memories.models import MemoryKind
from tests.mcp_inproc import call_tool, structured
from tests.memories.validity_support import Clock


def write(client, content, scope, kind):
    answer = client.post(
        "/api/v1/memories",
        {"content": content, "kind": kind, "scope": scope.public_id},
        format="json",
    )
    assert answer.status_code in (200, 201), answer.json()
    return answer.json()["id"]


def hits(client, query, **extra):
    answer = client.post("/api/v1/recall", {"query": query, **extra}, format="json").json()
    return {hit["id"]: hit for hit in answer["results"]}


@pytest.fixture
def clock(tenancy, kinds_seeded):
    return Clock()


def test_facts_and_tasks_go_stale_while_decisions_hold(tenancy, api, clock):
    owner = api(tenancy.owner)
    task = write(owner, "Rotate the staging TLS certificate.", tenancy.team, "task")
    decision = write(
        owner, "We rotate TLS certificates with cert-manager.", tenancy.team, "decision"
    )
    clock.days_pass(20)  # a task's half-life is 14 days, a decision's ten years
    found = hits(owner, "rotate TLS certificate")
    assert found[task]["stale"] is True and found[decision]["stale"] is False
    tasks.fold_recall_counts()  # that recall handed both out: recalled now, fresh again
    found = hits(owner, "rotate TLS certificate")
    assert found[task]["stale"] is False
    clock.days_pass(20)
    assert hits(owner, "rotate TLS certificate")[task]["stale"] is True
    write(owner, "Rotate the staging TLS certificate.", tenancy.team, "task")  # said again
    assert hits(owner, "rotate TLS certificate")[task]["stale"] is False
    context = owner.post("/api/v1/context", {"topic": "rotate TLS certificate"}, format="json")
    rows = {row["id"]: row for s in context.json()["sections"] for row in s["rows"]}
    assert rows[task]["stale"] is False and rows[decision]["stale"] is False


def test_the_half_life_of_a_kind_is_the_decay_and_the_stale_rule(tenancy, api, clock):
    owner = api(tenancy.owner)
    fact = write(owner, "The build cache lives in the ci-cache bucket.", tenancy.team, "fact")
    clock.days_pass(100)
    before = hits(owner, "build cache bucket")[fact]
    assert before["stale"] is False  # a fact's half-life is a year
    MemoryKind.objects.filter(slug="fact").update(half_life_days=50)  # as staff edit it
    after = hits(owner, "build cache bucket")[fact]
    assert after["stale"] is True
    assert after["score"] == pytest.approx(before["score"] * 0.25 / 0.5 ** (100 / 365), rel=0.02)


def test_history_over_mcp_and_as_of_on_the_tools(tenancy, api, clock):
    from tests.factories import make_token

    owner = api(tenancy.owner)
    old = write(owner, "Payments run on the Stripe sandbox in staging.", tenancy.team, "fact")
    clock.days_pass(3)
    new = write(owner, "Payments run on Adyen test mode in staging.", tenancy.team, "fact")
    owner.post(f"/api/v1/memories/{old}/supersede", {"by": new}, format="json")
    clock.days_pass(3)
    secret = make_token(tenancy.reader)
    history = structured(call_tool(secret, "history", {"memory_id": old}))
    assert [p["ended"] for p in history["periods"]] == ["superseded"]
    assert [link["newer"] for link in history["superseded_by"]] == [new]
    assert [e["event"] for e in history["events"]] == ["written", "superseded"]
    assert history["events"][1] | {"at": None} == {
        "at": None,
        "event": "superseded",
        "by": "owner",
        "memory": new,
        "version": None,
        "content": None,
        "detail": "",
    }
    then = clock.iso(1)
    recalled = structured(call_tool(secret, "recall", {"query": "payments staging", "as_of": then}))
    assert [hit["id"] for hit in recalled["results"]] == [old]
    context = structured(call_tool(secret, "build_context", {"topic": "payments", "as_of": then}))
    assert "Stripe sandbox" in context["markdown"] and "Adyen" not in context["markdown"]
    briefing = structured(call_tool(secret, "briefing", {"as_of": clock.iso(4)}))
    assert "Adyen" in briefing["markdown"] and "Stripe" not in briefing["markdown"]
    outsider = make_token(tenancy.outsider)
    refused = structured(call_tool(outsider, "history", {"memory_id": old}))
    assert refused["error"]["code"] == "not_found"
