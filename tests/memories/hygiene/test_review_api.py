"""The review queue over REST and MCP: who sees what, each action, challenges, undo."""

from __future__ import annotations

import pytest

from memories.models import Conflict, ConflictStatus
from tests.factories import make_scope, make_token
from tests.mcp_inproc import call_tool, structured
from tests.memories.hygiene.support import write


def resolve(client, conflict, action):
    return client.post(
        f"/api/v1/conflicts/{conflict.public_id}/resolve", {"action": action}, format="json"
    )


def test_a_reviewer_sees_pairs_only_in_scopes_they_administer(open_pair, tenancy, api):
    mine = make_scope(owner=tenancy.writer, slug="writers-own")
    x = write(tenancy.writer, "Lint runs on every push to main.", mine)
    y = write(tenancy.writer, "Every push to main runs the linter.", mine)
    Conflict.objects.create(scope=mine, memory_a=x, memory_b=y, status=ConflictStatus.OPEN)
    owner_ids = [c["id"] for c in api(tenancy.owner).get("/api/v1/conflicts").json()["results"]]
    writer_ids = [c["id"] for c in api(tenancy.writer).get("/api/v1/conflicts").json()["results"]]
    assert owner_ids == [open_pair.public_id]
    assert open_pair.public_id not in writer_ids and len(writer_ids) == 1
    answer = api(tenancy.owner).get(f"/api/v1/conflicts/{open_pair.public_id}").json()
    assert answer["memory_a"]["content"] == open_pair.memory_a.content
    assert answer["memory_b"]["rank"] == 2 and answer["verdict"] == "duplicate"
    assert api(tenancy.writer).get(f"/api/v1/conflicts/{open_pair.public_id}").status_code == 403
    missing = api(tenancy.outsider).get("/api/v1/conflicts/cfl_missing").json()
    foreign = api(tenancy.outsider).get(f"/api/v1/conflicts/{open_pair.public_id}").json()
    assert missing["error"]["code"] == foreign["error"]["code"] == "not_found"
    assert (
        missing["error"]["message"].replace("cfl_missing", open_pair.public_id)
        == foreign["error"]["message"]
    )


@pytest.mark.parametrize(
    ("action", "a_state", "b_state"),
    [
        ("keep_both", "valid", "valid"),
        ("dismiss", "valid", "valid"),
        ("a_supersedes_b", "valid", "superseded"),
        ("b_supersedes_a", "superseded", "valid"),
        ("merge", "superseded", "valid"),
        ("forget_a", "forgotten", "valid"),
        ("forget_b", "valid", "forgotten"),
    ],
)
def test_each_action_then_undo(open_pair, tenancy, api, action, a_state, b_state):
    owner = api(tenancy.owner)
    answer = resolve(owner, open_pair, action).json()
    assert (answer["status"], answer["resolution"], answer["resolved_by"]) == (
        "resolved",
        action,
        "owner",
    )
    assert (answer["memory_a"]["state"], answer["memory_b"]["state"]) == (a_state, b_state)
    assert resolve(owner, open_pair, "keep_both").status_code == 409
    undone = resolve(owner, open_pair, "undo").json()
    assert undone["status"] == "open"
    assert (undone["memory_a"]["state"], undone["memory_b"]["state"]) == ("valid", "valid")
    assert resolve(owner, open_pair, "undo").status_code == 409


def test_a_challenge_is_a_queue_item_for_the_admins(pair, tenancy, api):
    writer = api(tenancy.writer)
    url = f"/api/v1/memories/{pair[0].public_id}/challenge"
    created = writer.post(url, {"reason": "Staging is reset on Sundays now."}, format="json")
    assert created.status_code == 201
    body = created.json()
    assert (body["memory"], body["status"], body["new"]) == (pair[0].public_id, "open", True)
    item = api(tenancy.owner).get(f"/api/v1/conflicts/{body['id']}").json()
    assert (item["verdict"], item["memory_b"]) == ("challenge", None)
    assert item["challenged_by"] == "writer"
    again = writer.post(url, {"reason": "Still wrong."}, format="json")
    assert again.status_code == 200 and again.json()["id"] == body["id"]
    assert api(tenancy.reader).post(url, {"reason": "x"}, format="json").status_code == 403
    assert writer.post(url, {"reason": "  "}, format="json").status_code == 400
    owner = api(tenancy.owner)
    conflict = Conflict.objects.get(public_id=body["id"])
    assert resolve(owner, conflict, "merge").status_code == 400
    assert resolve(owner, conflict, "forget_a").json()["memory_a"]["state"] == "forgotten"


def test_the_mcp_tools_list_resolve_and_challenge(open_pair, pair, tenancy):
    token = make_token(tenancy.owner)
    listed = structured(call_tool(token, "list_conflicts", {}))
    assert [item["id"] for item in listed["results"]] == [open_pair.public_id]
    result = call_tool(
        token, "resolve_conflict", {"conflict_id": open_pair.public_id, "action": "merge"}
    )
    assert structured(result)["memory_a"]["state"] == "superseded"
    agent = make_token(tenancy.writer)
    result = call_tool(agent, "challenge", {"memory_id": pair[1].public_id, "reason": "Outdated."})
    assert structured(result)["new"] is True
    refused = call_tool(
        agent, "resolve_conflict", {"conflict_id": open_pair.public_id, "action": "undo"}
    )
    assert refused.is_error and structured(refused)["error"]["code"] == "forbidden"


def test_recall_context_and_briefing_mark_disputed_memories(open_pair, pair, tenancy, api):
    owner = api(tenancy.owner)
    query = {"query": "staging database reset", "scopes": [tenancy.team.public_id]}
    hits = owner.post("/api/v1/recall", query, format="json").json()["results"]
    assert hits and all(hit["disputed"] for hit in hits)
    topic = {"topic": "staging database reset", "scopes": [tenancy.team.public_id]}
    context = owner.post("/api/v1/context", topic, format="json").json()
    rows = [row for section in context["sections"] for row in section["rows"]]
    assert rows and all(row["disputed"] for row in rows)
    assert "[fact, disputed]" in context["markdown"]
    briefing = owner.get("/api/v1/briefing", {"scopes": tenancy.team.public_id}).json()
    assert "[fact, disputed]" in briefing["markdown"]
    resolve(owner, open_pair, "keep_both")
    hits = owner.post("/api/v1/recall", query, format="json").json()["results"]
    assert not any(hit["disputed"] for hit in hits)


def test_a_context_marks_a_disputed_decision_outside_its_topic_and_only_while_open(
    tenancy, kinds_seeded, api
):
    """build_context asks for its other sections' marks on its own (while the model embeds the
    topic) and takes its search's from the search statement: both are marked, both drop the
    mark once the item is resolved."""
    team = tenancy.team
    a = write(tenancy.owner, "We decided to freeze deploys on Fridays.", team, kind="decision")
    b = write(tenancy.owner, "Deploys are frozen every Friday.", team, kind="decision")
    topic_hit = write(tenancy.owner, "The staging database is reset every Monday.", team)
    other = write(tenancy.owner, "The staging database reset also clears the cache.", team)
    conflicts = [
        Conflict.objects.create(
            scope=team, memory_a=a, memory_b=b, status=ConflictStatus.OPEN, confidence=0.8
        ),
        Conflict.objects.create(
            scope=team, memory_a=topic_hit, memory_b=other, status=ConflictStatus.OPEN
        ),
    ]
    owner = api(tenancy.owner)
    body = {"topic": "staging database reset", "scopes": [team.public_id]}

    def marks() -> dict[str, tuple[str, bool]]:
        context = owner.post("/api/v1/context", body, format="json").json()
        return {
            row["id"]: (section["name"], row["disputed"])
            for section in context["sections"]
            for row in section["rows"]
        }

    found = marks()
    assert found[a.public_id] == found[b.public_id] == ("recent", True)
    assert found[topic_hit.public_id] == ("relevant", True)
    for conflict in conflicts:
        resolve(owner, conflict, "keep_both")
    assert not any(disputed for _, disputed in marks().values())
