"""Validity over time: what recall, context and briefings answer `as_of` an instant after
supersede, edit, forget and restore, and hygiene's merge and its undo; the periods each leaves."""

from __future__ import annotations

import pytest

from memories.hygiene import review
from memories.models import Conflict, ConflictStatus, Memory, Relation
from tests.memories.hygiene.support import write
from tests.memories.validity_support import Clock
from zeromemory.core.actor import Actor, Surface


def remember(client, content, scope, kind="decision"):
    answer = client.post(
        "/api/v1/memories",
        {"content": content, "kind": kind, "scope": scope.public_id},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    return answer.json()["id"]


def recalled(client, query, as_of=None, **extra):
    body = {"query": query, **extra}
    if as_of is not None:
        body["as_of"] = as_of
    answer = client.post("/api/v1/recall", body, format="json")
    assert answer.status_code == 200, answer.json()
    return {hit["id"]: hit for hit in answer.json()["results"]}


def periods(public_id):
    memory = Memory.objects.get(public_id=public_id)
    return [(p.started, p.ended) for p in memory.validity_periods.all()]


@pytest.fixture
def clock(tenancy, kinds_seeded):
    return Clock()


def test_a_decision_superseded_on_day_10_is_found_as_of_day_5_only(tenancy, api, clock):
    owner = api(tenancy.owner)
    old = remember(owner, "We deploy the billing service with Ansible playbooks.", tenancy.team)
    clock.days_pass(10)
    new = remember(owner, "We deploy the billing service with Argo CD from Git.", tenancy.team)
    superseded = owner.post(f"/api/v1/memories/{old}/supersede", {"by": new}, format="json").json()
    assert superseded["state"] == "superseded"
    clock.days_pass(2)
    query = "how do we deploy the billing service"
    on_day_5 = recalled(owner, query, as_of=clock.iso(5))
    assert old in on_day_5 and new not in on_day_5
    assert on_day_5[old]["content"] == "We deploy the billing service with Ansible playbooks."
    assert 4.9 < on_day_5[old]["age_days"] < 5.1  # aged at the instant asked about
    on_day_12 = recalled(owner, query, as_of=clock.iso(12))
    assert old not in on_day_12 and new in on_day_12
    now = recalled(owner, query)
    assert old not in now and new in now
    # The same for a reader of the scope, and the context and briefing of day 5.
    reader = api(tenancy.reader)
    assert old in recalled(reader, query, as_of=clock.iso(5))
    context = reader.post(
        "/api/v1/context", {"topic": query, "as_of": clock.iso(5)}, format="json"
    ).json()
    ids = {row["id"] for section in context["sections"] for row in section["rows"]}
    assert old in ids and new not in ids
    briefing = reader.get("/api/v1/briefing", {"as_of": clock.iso(12)}).json()
    ids = {row["id"] for section in briefing["sections"] for row in section["rows"]}
    assert new in ids and old not in ids
    assert periods(old) == [("created", "superseded")] and periods(new) == [("created", "")]


def test_an_edited_memory_answers_its_old_text_as_of_before_the_edit(tenancy, api, clock):
    owner = api(tenancy.owner)
    memory = remember(owner, "The staging API listens on port 8080.", tenancy.team, kind="fact")
    clock.days_pass(4)
    edited = owner.patch(
        f"/api/v1/memories/{memory}",
        {"content": "The staging API listens on port 9090.", "kind": "convention"},
        format="json",
    )
    assert edited.status_code == 200
    clock.days_pass(4)
    query = "staging API port"
    before = recalled(owner, query, as_of=clock.iso(2))[memory]
    assert (before["content"], before["kind"]) == ("The staging API listens on port 8080.", "fact")
    after = recalled(owner, query, as_of=clock.iso(6))[memory]
    assert (after["content"], after["kind"]) == (
        "The staging API listens on port 9090.",
        "convention",
    )
    assert recalled(owner, query)[memory]["content"] == "The staging API listens on port 9090."
    context = owner.post(
        "/api/v1/context", {"topic": query, "as_of": clock.iso(2)}, format="json"
    ).json()
    assert "port 8080" in context["markdown"] and "port 9090" not in context["markdown"]
    assert periods(memory) == [("created", "")]  # an edit keeps it valid


def test_a_forgotten_then_restored_memory_has_a_gap_in_its_validity(tenancy, api, clock):
    owner = api(tenancy.owner)
    memory = remember(owner, "Feature flags live in LaunchDarkly.", tenancy.team, kind="fact")
    clock.days_pass(3)
    forgot = owner.post(f"/api/v1/memories/{memory}/forget", {"reason": "moved"}, format="json")
    assert forgot.status_code == 200
    clock.days_pass(3)
    assert owner.post(f"/api/v1/memories/{memory}/restore").status_code == 200
    clock.days_pass(3)
    query = "where do feature flags live"
    assert memory in recalled(owner, query, as_of=clock.iso(1))
    assert memory not in recalled(owner, query, as_of=clock.iso(4.5))
    assert memory in recalled(owner, query, as_of=clock.iso(7))
    assert memory in recalled(owner, query)
    assert periods(memory) == [("created", "forgotten"), ("restored", "")]
    history = owner.get(f"/api/v1/memories/{memory}/history").json()
    assert [p["ended"] for p in history["periods"]] == ["forgotten", ""]
    gap = (history["periods"][0]["valid_until"], history["periods"][1]["valid_from"])
    assert gap[0] < gap[1]
    assert [e["event"] for e in history["events"]] == ["written", "forgotten", "restored"]
    assert {e["by"] for e in history["events"]} == {"owner"}


def test_undoing_a_hygiene_merge_restores_the_validity_of_both(tenancy, api, clock):
    a = write(tenancy.owner, "The staging database is reset every Monday at 06:00.", tenancy.team)
    b = write(tenancy.owner, "Every Monday at 06:00 the staging DB gets wiped.", tenancy.team)
    conflict = Conflict.objects.create(
        scope=tenancy.team,
        memory_a=a,
        memory_b=b,
        status=ConflictStatus.OPEN,
        verdict=Relation.DUPLICATE,
        confidence=0.8,
    )
    actor = Actor(user=tenancy.owner, surface=Surface.API)
    clock.days_pass(2)
    review.conflict_resolve(actor=actor, conflict=conflict, action="merge")
    a.refresh_from_db()
    b.refresh_from_db()
    retired, kept = (a, b) if not a.valid else (b, a)
    assert retired.state == "superseded" and kept.valid
    clock.days_pass(2)
    review.conflict_resolve(actor=actor, conflict=conflict, action="undo")
    clock.days_pass(2)
    owner = api(tenancy.owner)
    query = "staging database reset Monday"
    assert {a.public_id, b.public_id} <= set(recalled(owner, query, as_of=clock.iso(1)))
    during = recalled(owner, query, as_of=clock.iso(3))
    assert kept.public_id in during and retired.public_id not in during
    assert {a.public_id, b.public_id} <= set(recalled(owner, query, as_of=clock.iso(5)))
    assert {a.public_id, b.public_id} <= set(recalled(owner, query))
    assert periods(retired.public_id) == [("created", "superseded"), ("restored", "")]
    assert periods(kept.public_id) == [("created", "")]
    history = owner.get(f"/api/v1/memories/{kept.public_id}/history").json()
    [merge] = history["merges"]
    assert (merge["kept"], merge["retired"]) == (kept.public_id, retired.public_id)
    assert merge["undone_by"] == "owner" and len(merge["provenance"]) == 1
    events = [(e["event"], e["memory"]) for e in history["events"]]
    assert ("merged", retired.public_id) in events and ("unmerged", retired.public_id) in events
    lost = owner.get(f"/api/v1/memories/{retired.public_id}/history").json()
    assert [link["newer"] for link in lost["superseded_by"]] == [kept.public_id]
    assert [link["older"] for link in history["supersedes"]] == [retired.public_id]


def test_a_held_memory_kept_in_review_is_valid_from_when_it_was_kept(tenancy, api, clock):
    actor = Actor(user=tenancy.owner, surface=Surface.CAPTURE)
    from memories.services.remember import RememberInput, memory_remember

    held = memory_remember(
        actor=actor,
        request=RememberInput(
            content="The nightly export job runs at 02:00.",
            kind="fact",
            scope=tenancy.team.public_id,
            author_kind="capture",
            held_reason="Low confidence.",
        ),
    ).memory
    assert held.valid_from is None and periods(held.public_id) == []
    clock.days_pass(2)
    conflict = Conflict.objects.get(memory_a=held, verdict=Relation.HELD)
    review.conflict_resolve(
        actor=Actor(user=tenancy.owner, surface=Surface.API), conflict=conflict, action="keep_both"
    )
    clock.days_pass(2)
    owner = api(tenancy.owner)
    assert held.public_id not in recalled(owner, "nightly export job", as_of=clock.iso(1))
    assert held.public_id in recalled(owner, "nightly export job", as_of=clock.iso(3))
    assert periods(held.public_id) == [("restored", "")]


def test_the_migration_fills_validity_from_what_was_stored(tenancy, api, clock):
    """0018 on rows written before it: the periods it rebuilds are those the services wrote."""
    import importlib

    from django.apps import apps
    from django.db import connection

    owner = api(tenancy.owner)
    plain = remember(owner, "Backups are encrypted with age.", tenancy.team)
    forgotten = remember(owner, "The VPN uses WireGuard.", tenancy.team)
    restored = remember(owner, "Logs ship to Loki.", tenancy.team)
    older = remember(owner, "Queues run on RabbitMQ.", tenancy.team)
    newer = remember(owner, "Queues run on NATS JetStream.", tenancy.team)
    clock.days_pass(2)
    owner.post(f"/api/v1/memories/{forgotten}/forget", {"reason": "gone"}, format="json")
    owner.post(f"/api/v1/memories/{restored}/forget", {"reason": "wrong"}, format="json")
    owner.post(f"/api/v1/memories/{older}/supersede", {"by": newer}, format="json")
    clock.days_pass(2)
    owner.post(f"/api/v1/memories/{restored}/restore")
    clock.days_pass(2)
    ids = [plain, forgotten, restored, older, newer]

    def state():
        memories = Memory.objects.filter(public_id__in=ids).order_by("public_id")
        return {
            m.public_id: (
                m.valid_from,
                m.valid_until,
                m.validity_gaps,
                [
                    (p.valid_from, p.valid_until, p.started, p.ended, p.replaced_by_id)
                    for p in m.validity_periods.all()
                ],
            )
            for m in memories
        }

    written = state()
    with connection.cursor() as cursor:
        # The rows as 0018 met them: `valid` a stored flag (0026 derives it from the bounds this
        # clears); the test's transaction brings the generated column back.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred check may be pending
        cursor.execute("ALTER TABLE memories_memory DROP COLUMN valid CASCADE")
        cursor.execute("ALTER TABLE memories_memory ADD COLUMN valid boolean")
        cursor.execute(
            "UPDATE memories_memory SET valid = (valid_from IS NOT NULL AND valid_until IS NULL)"
        )
    Memory.objects.filter(public_id__in=ids).update(
        valid_from=None, valid_until=None, validity_gaps=False
    )
    for memory in Memory.objects.filter(public_id__in=ids):
        memory.validity_periods.all().delete()

    class Editor:
        pass

    editor = Editor()
    editor.connection = connection
    importlib.import_module("memories.migrations.0018_validity").fill(apps, editor)
    filled = state()
    assert filled[restored][2] is True and len(filled[restored][3]) == 2
    assert filled[older][3][0][3:] == ("superseded", Memory.objects.get(public_id=newer).pk)
    assert filled == written
