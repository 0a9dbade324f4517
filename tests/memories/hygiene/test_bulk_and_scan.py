"""get_conflict, resolve_conflicts (bulk: dry run, all or nothing, confirm) and scan_hygiene
(one scope now), over MCP and REST."""

from __future__ import annotations

import pytest

from memories import spend
from memories.hygiene import scan
from memories.models import (
    Conflict,
    ConflictStatus,
    HygieneScan,
    LlmPath,
    LlmSpend,
    Memory,
    Relation,
)
from tests.factories import make_scope, make_token
from tests.mcp_inproc import call_tool, structured
from tests.memories.hygiene.support import write


@pytest.fixture
def second_pair(tenancy, kinds_seeded):
    a = write(tenancy.owner, "Lint runs on every push to main.", tenancy.team)
    b = write(tenancy.owner, "Every push to main runs the linter.", tenancy.team)
    return Conflict.objects.create(
        scope=tenancy.team,
        memory_a=a,
        memory_b=b,
        status=ConflictStatus.OPEN,
        verdict=Relation.DUPLICATE,
        confidence=0.7,
    )


def call(user, tool, **arguments):
    result = call_tool(make_token(user), tool, arguments)
    return result.is_error, structured(result)


def test_get_conflict_answers_both_memories_to_admins_only(open_pair, tenancy):
    failed, answer = call(tenancy.owner, "get_conflict", conflict_id=open_pair.public_id)
    assert not failed
    assert answer["memory_a"]["content"] == open_pair.memory_a.content
    assert answer["memory_b"]["content"] == open_pair.memory_b.content
    assert answer["verdict"] == "duplicate" and answer["status"] == "open"
    failed, refused = call(tenancy.reader, "get_conflict", conflict_id=open_pair.public_id)
    assert failed and refused["error"]["code"] == "forbidden"
    failed, missing = call(tenancy.owner, "get_conflict", conflict_id="cfl_missing")
    assert missing["error"]["code"] == "not_found" and "conflict_id" in missing["error"]["details"]


def test_a_dry_run_answers_what_would_happen_and_writes_nothing(open_pair, second_pair, tenancy):
    items = [
        {"conflict_id": open_pair.public_id, "action": "a_supersedes_b"},
        {"conflict_id": second_pair.public_id, "action": "forget_b"},
    ]
    failed, answer = call(tenancy.owner, "resolve_conflicts", items=items, dry_run=True)
    assert not failed, answer
    assert answer["dry_run"] is True
    first, second = answer["results"]
    assert (first["status"], first["resolution"]) == ("resolved", "a_supersedes_b")
    assert first["memory_b"]["state"] == "superseded"
    assert second["memory_b"]["state"] == "forgotten"
    # Nothing was written.
    assert set(Conflict.objects.values_list("status", flat=True)) == {ConflictStatus.OPEN}
    assert Memory.objects.filter(scope=tenancy.team, valid=True).count() == 4


def test_several_items_need_confirm_and_then_resolve_together(open_pair, second_pair, tenancy):
    items = [
        {"conflict_id": open_pair.public_id, "action": "keep_both"},
        {"conflict_id": second_pair.public_id, "action": "forget_a"},
    ]
    failed, refused = call(tenancy.owner, "resolve_conflicts", items=items)
    assert failed and refused["error"]["code"] == "validation_failed"
    assert "confirm" in refused["error"]["details"]
    assert not Conflict.objects.filter(status=ConflictStatus.RESOLVED).exists()

    failed, answer = call(tenancy.owner, "resolve_conflicts", items=items, confirm=True)
    assert not failed, answer
    assert [r["resolution"] for r in answer["results"]] == ["keep_both", "forget_a"]
    second_pair.memory_a.refresh_from_db()
    assert not second_pair.memory_a.valid
    # One item needs no confirmation.
    failed, _ = call(
        tenancy.owner,
        "resolve_conflicts",
        items=[{"conflict_id": open_pair.public_id, "action": "undo"}],
    )
    assert not failed
    assert Conflict.objects.get(pk=open_pair.pk).status == ConflictStatus.OPEN


def test_one_invalid_item_refuses_the_whole_call_naming_its_index(open_pair, second_pair, tenancy):
    second_pair.status = ConflictStatus.RESOLVED
    second_pair.save(update_fields=["status"])
    items = [
        {"conflict_id": open_pair.public_id, "action": "forget_a"},
        {"conflict_id": second_pair.public_id, "action": "keep_both"},  # not open
    ]
    failed, refused = call(tenancy.owner, "resolve_conflicts", items=items, confirm=True)
    assert failed and refused["error"]["code"] == "validation_failed"
    assert list(refused["error"]["details"]) == ["items.1"]
    open_pair.refresh_from_db()
    open_pair.memory_a.refresh_from_db()
    assert open_pair.status == ConflictStatus.OPEN and open_pair.memory_a.valid  # not written

    twice = [items[0], {"conflict_id": open_pair.public_id, "action": "dismiss"}]
    failed, refused = call(tenancy.owner, "resolve_conflicts", items=twice, confirm=True)
    assert list(refused["error"]["details"]) == ["items.1"]

    foreign_scope = make_scope(owner=tenancy.outsider, slug="elsewhere")
    x = write(tenancy.outsider, "Builds are cached for a week.", foreign_scope)
    y = write(tenancy.outsider, "The build cache lives seven days.", foreign_scope)
    foreign = Conflict.objects.create(
        scope=foreign_scope, memory_a=x, memory_b=y, status=ConflictStatus.OPEN
    )
    mixed = [items[0], {"conflict_id": foreign.public_id, "action": "keep_both"}]
    failed, refused = call(tenancy.owner, "resolve_conflicts", items=mixed, confirm=True)
    assert refused["error"]["code"] == "not_found"
    assert list(refused["error"]["details"]) == ["items.1.conflict_id"]
    assert Conflict.objects.get(pk=open_pair.pk).status == ConflictStatus.OPEN


def test_bulk_resolution_over_rest(open_pair, second_pair, tenancy, api):
    client = api(tenancy.owner)
    items = [
        {"conflict_id": open_pair.public_id, "action": "keep_both"},
        {"conflict_id": second_pair.public_id, "action": "dismiss"},
    ]
    dry = client.post("/api/v1/conflicts/resolve", {"items": items, "dry_run": True}, format="json")
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert not Conflict.objects.filter(status=ConflictStatus.RESOLVED).exists()
    refused = client.post("/api/v1/conflicts/resolve", {"items": items}, format="json")
    assert refused.status_code == 400 and "confirm" in refused.json()["error"]["details"]
    done = client.post(
        "/api/v1/conflicts/resolve", {"items": items, "confirm": True}, format="json"
    )
    assert done.status_code == 200
    assert Conflict.objects.filter(status=ConflictStatus.RESOLVED).count() == 2
    reader = api(tenancy.reader).post("/api/v1/conflicts/resolve", {"items": items}, format="json")
    assert reader.status_code == 403


def test_scan_hygiene_scans_one_scope_now_and_says_what_it_queued(pair, tenancy, api, settings):
    elsewhere = make_scope(owner=tenancy.owner, slug="elsewhere")
    write(tenancy.owner, pair[0].content + " Really.", elsewhere)
    write(tenancy.owner, pair[1].content + " Really.", elsewhere)
    team = tenancy.team.public_id
    failed, answer = call(tenancy.owner, "scan_hygiene", scope=team)
    assert not failed, answer
    assert (answer["scope"], answer["subjects"], answer["more"]) == (team, 2, False)
    assert (answer["pairs_found"], answer["pairs_new"], answer["awaiting_judgement"]) == (1, 1, 1)
    [conflict] = Conflict.objects.all()  # only the team's pair: the other scope is not scanned
    assert conflict.scope == tenancy.team
    assert {conflict.memory_a_id, conflict.memory_b_id} == {pair[0].pk, pair[1].pk}
    assert answer["judge_budget"] == spend.budget_of(LlmPath.JUDGE)
    assert answer["over_budget"] is False

    # Again: the pair is known, nothing new is queued; a spent budget is said.
    settings.HYGIENE_DAILY_TOKENS = 100
    LlmSpend.objects.create(
        path=LlmPath.JUDGE, scope=tenancy.team, day=spend.today(), tokens=150, calls=1
    )
    again = api(tenancy.owner).post(f"/api/v1/scopes/{team}/hygiene-scan")
    assert again.status_code == 200, again.content
    body = again.json()
    assert (body["pairs_found"], body["pairs_new"], body["awaiting_judgement"]) == (1, 0, 1)
    assert (body["judge_tokens_today"], body["judge_budget"], body["over_budget"]) == (
        150,
        100,
        True,
    )
    assert Conflict.objects.count() == 1


def test_scan_hygiene_is_for_admins(pair, tenancy, api):
    team = tenancy.team.public_id
    failed, refused = call(tenancy.writer, "scan_hygiene", scope=team)
    assert failed and refused["error"]["code"] == "forbidden"
    failed, refused = call(tenancy.outsider, "scan_hygiene", scope=team)
    assert refused["error"]["code"] == "not_found" and "scope" in refused["error"]["details"]
    assert api(tenancy.reader).post(f"/api/v1/scopes/{team}/hygiene-scan").status_code == 403
    assert not Conflict.objects.exists()


def test_scan_hygiene_takes_what_changed_since_the_last_finished_scan(pair, tenancy):
    scan.hygiene_scan()  # the schedule's scan: the pair is queued, every memory compared
    team = tenancy.team.public_id
    failed, answer = call(tenancy.owner, "scan_hygiene", scope=team)
    assert not failed and (answer["subjects"], answer["pairs_new"]) == (0, 0)
    write(tenancy.owner, "Frontend components are named in PascalCase.", tenancy.team)
    failed, answer = call(tenancy.owner, "scan_hygiene", scope=team)
    assert (answer["subjects"], answer["pairs_found"]) == (1, 0)
    # A share at a time: what is left past it is said, and left to the schedule.
    HygieneScan.objects.all().delete()
    first = scan.scope_scan(scope_id=tenancy.team.pk, slice_size=2)
    assert (first.subjects, first.more) == (2, True)


def _more_of_the_team(tenancy) -> list[Memory]:
    """Three memories of the team beside the pair, unlike it and each other: five subjects."""
    return [
        write(tenancy.owner, "Frontend components are named in PascalCase.", tenancy.team),
        write(tenancy.owner, "The release train leaves every second Thursday.", tenancy.team),
        write(tenancy.owner, "Secrets live in the vault, never in the repository.", tenancy.team),
    ]


def test_scan_hygiene_goes_on_from_next_cursor_until_every_subject_is_compared_once(
    pair, tenancy, api, settings
):
    settings.HYGIENE_SCOPE_SCAN_SUBJECTS = 2  # the share of one request, as an operator sets it
    subjects = [*pair, *_more_of_the_team(tenancy)]
    team = tenancy.team.public_id
    client = api(tenancy.owner)
    answers, body = [], {}
    while True:  # a client's loop: ask again with next_cursor while more
        response = client.post(f"/api/v1/scopes/{team}/hygiene-scan", body, format="json")
        assert response.status_code == 200, response.content
        answers.append(response.json())
        if not answers[-1]["more"]:
            break
        assert len(answers) < 10, answers  # it ends
        body = {"cursor": answers[-1]["next_cursor"]}
    # ceil(5 / 2) calls, each subject once, each share starting where the last one ended.
    assert [(a["subjects"], a["more"]) for a in answers] == [(2, True), (2, True), (1, False)]
    ordered = sorted(subjects, key=lambda memory: memory.pk)
    assert [a["next_cursor"] for a in answers] == [
        ordered[1].public_id,
        ordered[3].public_id,
        None,
    ]
    # The pair was met in the first share and queued once.
    assert [a["pairs_new"] for a in answers] == [1, 0, 0]
    [conflict] = Conflict.objects.all()
    assert {conflict.memory_a_id, conflict.memory_b_id} == {pair[0].pk, pair[1].pk}

    # The same loop over MCP: the tool takes the cursor as an argument.
    failed, first = call(tenancy.owner, "scan_hygiene", scope=team)
    assert not failed and (first["subjects"], first["more"]) == (2, True)
    failed, second = call(tenancy.owner, "scan_hygiene", scope=team, cursor=first["next_cursor"])
    assert not failed and (second["subjects"], second["more"]) == (2, True)
    failed, last = call(tenancy.owner, "scan_hygiene", scope=team, cursor=second["next_cursor"])
    assert not failed and (last["subjects"], last["more"], last["next_cursor"]) == (1, False, None)


def test_scan_hygiene_refuses_a_cursor_that_is_not_this_scopes_naming_it(pair, tenancy, api):
    team = tenancy.team.public_id
    elsewhere = write(
        tenancy.owner, "The canteen opens at noon.", make_scope(owner=tenancy.owner, slug="x")
    )
    outsiders = write(
        tenancy.outsider, "The outsider's own note.", make_scope(owner=tenancy.outsider, slug="own")
    )
    client = api(tenancy.owner)
    messages = {}
    bad = {
        "malformed": "not-a-cursor",
        "missing": "mem_00000000000000000000000000",
        "another scope's memory": elsewhere.public_id,
        "a memory the caller cannot read": outsiders.public_id,
        "nul": "mem_\x00",
        "huge": "m" * 41,
        "a number": 12,
        "null": None,
    }
    for name, cursor in bad.items():
        response = client.post(
            f"/api/v1/scopes/{team}/hygiene-scan", {"cursor": cursor}, format="json"
        )
        assert response.status_code == 400, (name, response.content)
        error = response.json()["error"]
        assert error["code"] == "validation_failed" and "cursor" in error["details"], (name, error)
        messages[name] = error["message"]
        if not isinstance(cursor, str) or "\x00" in cursor or len(cursor) > 40:
            continue
        failed, refused = call(tenancy.owner, "scan_hygiene", scope=team, cursor=cursor)
        assert failed and refused["error"]["code"] == "validation_failed", (name, refused)
        assert "cursor" in refused["error"]["details"], (name, refused)
    for cursor in ("mem_\x00", "m" * 41, 12):  # what the tool's arguments refuse themselves
        failed, refused = call(tenancy.owner, "scan_hygiene", scope=team, cursor=cursor)
        assert failed and "cursor" in refused["error"]["details"], (cursor, refused)
    # Missing, another scope's or unreadable answer alike: the refusal tells none from another.
    alike = ("missing", "another scope's memory", "a memory the caller cannot read")
    assert len({messages[name] for name in alike}) == 1, messages
    assert not Conflict.objects.exists()
