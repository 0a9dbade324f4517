"""mark_used, the rule candidates it grows, the admins' decisions and the rules' delivery,
through REST, MCP (in process) and the services the surfaces call."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from django.test import override_settings

from memories.models import Conflict, ReportedUse, Rule, RuleStatus, UsageCounter
from memories.recall.context import briefing, build_context
from memories.rules import decisions
from scopes.models import Role
from tests.factories import UserFactory, add_member, make_scope, make_token
from tests.mcp_inproc import call_tool, opened, structured
from tests.memories.recall_support import remember_all
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.usefixtures("kinds_seeded")

CONVENTION = "Every migration in the billing service is reviewed by two people."


@pytest.fixture
def team_memories(tenancy):
    return remember_all(
        tenancy.owner,
        [
            (CONVENTION, "convention"),
            ("The billing service stores invoices for ten years.", "fact"),
        ],
        scope=tenancy.team.public_id,
    )


def serve(client, conversation):
    """A briefing in the conversation: it hands out every memory of these small scopes, so
    mark_used may count them there."""
    response = client.get("/api/v1/briefing", {"conversation_id": conversation, "max_tokens": 4000})
    assert response.status_code == 200, response.content


def use(client, ids, conversation, *, served=True, **extra):
    if served:
        serve(client, conversation)
    return client.post(
        "/api/v1/memories/used",
        {"memory_ids": ids, "conversation_id": conversation, **extra},
        format="json",
    )


def test_a_memory_counts_once_per_conversation(api, tenancy, team_memories):
    convention = team_memories[0]
    writer = api(tenancy.writer)
    first = use(writer, [convention.public_id], "c1")
    assert first.status_code == 200, first.content
    assert first.json()["counted"] == [convention.public_id]
    again = use(writer, [convention.public_id, convention.public_id], "c1").json()
    assert again["counted"] == [] and again["repeated"] == [convention.public_id]
    assert UsageCounter.objects.get(memory=convention).uses == 1
    use(writer, [convention.public_id], "c2")
    assert UsageCounter.objects.get(memory=convention).uses == 2


def test_three_conversations_make_a_candidate_only_for_rule_kinds(api, tenancy, team_memories):
    convention, fact = team_memories
    writer = api(tenancy.writer)
    for conversation in ("c1", "c2"):
        assert use(writer, [convention.public_id, fact.public_id], conversation).status_code == 200
    assert not Rule.objects.exists()
    use(writer, [convention.public_id, fact.public_id], "c3")
    rule = Rule.objects.get()
    assert rule.memory == convention and rule.status == RuleStatus.CANDIDATE
    assert rule.conversations == 3 and rule.text == CONVENTION


@override_settings(RULE_MIN_CONVERSATIONS=1)
def test_the_threshold_is_a_setting(api, tenancy, team_memories):
    use(api(tenancy.owner), [team_memories[0].public_id], "only")
    assert Rule.objects.filter(status=RuleStatus.CANDIDATE).count() == 1


def test_uses_without_a_conversation_id_count_once(api, tenancy, team_memories):
    client = api(tenancy.owner)
    serve(client, "")
    for _ in range(4):
        client.post(
            "/api/v1/memories/used", {"memory_ids": [team_memories[0].public_id]}, format="json"
        )
    assert ReportedUse.objects.count() == 1
    assert not Rule.objects.exists()


def test_an_unreadable_memory_answers_not_found_and_changes_nothing(api, tenancy, team_memories):
    outsider = api(tenancy.outsider)
    response = use(outsider, [team_memories[0].public_id], "c1")
    assert response.status_code == 404
    assert response.json()["error"]["details"] == {
        "memory_ids": [response.json()["error"]["message"]]
    }
    # One readable and one unreadable id: nothing of the readable one is recorded either.
    own = remember_all(tenancy.outsider, [("My editor is vim.", "preference")])[0]
    response = use(outsider, [own.public_id, team_memories[0].public_id], "c1")
    assert response.status_code == 404
    result = call_tool(
        make_token(tenancy.outsider),
        "mark_used",
        {"memory_ids": [team_memories[0].public_id], "conversation_id": "c1"},
    )
    assert result.is_error and structured(result)["error"]["code"] == "not_found"
    assert not ReportedUse.objects.exists() and not UsageCounter.objects.exists()


def test_a_read_only_token_reports_nothing(api, tenancy, team_memories):
    response = use(api(tenancy.owner, read_only=True), [team_memories[0].public_id], "c1")
    assert response.status_code == 403
    assert not ReportedUse.objects.exists()


def test_found_wrong_loses_the_boost_and_opens_a_challenge(api, tenancy, team_memories):
    convention = team_memories[0]
    writer = api(tenancy.writer)
    use(writer, [convention.public_id], "c1")
    use(writer, [convention.public_id], "c2")
    response = use(
        writer, [], "c3", wrong=[{"memory_id": convention.public_id, "reason": "Only one now."}]
    )
    assert response.status_code == 200, response.content
    [challenged] = response.json()["wrong"]
    conflict = Conflict.objects.get(public_id=challenged["conflict_id"])
    assert conflict.memory_a == convention and "Only one now." in conflict.rationale
    usage = UsageCounter.objects.get(memory=convention)
    assert usage.uses == 0 and usage.found_wrong_at is not None
    # A reader may report use but not dispute: a challenge needs the writer role.
    reader = api(tenancy.reader)
    wrong = [{"memory_id": convention.public_id, "reason": "No."}]
    assert use(reader, [], "c4", wrong=wrong).status_code == 403


def test_mark_used_without_ids_names_the_field(api, tenancy):
    response = use(api(tenancy.owner), [], "c1")
    assert response.status_code == 400
    assert "memory_ids" in response.json()["error"]["details"]


def _candidate(tenancy, memory):
    client = api_for(tenancy.writer)
    for conversation in ("c1", "c2", "c3"):
        use(client, [memory.public_id], conversation)
    return Rule.objects.get(memory=memory)


def api_for(user, **options):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(user, **options)}")
    return client


def signed_in(user):
    """A REST client in a session just signed in (a fresh password check): what approving
    and moving rules take."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_login(user)
    return client


def test_admins_list_approve_in_new_words_reject_and_move(api, tenancy, team_memories):
    rule = _candidate(tenancy, team_memories[0])
    owner, reader = signed_in(tenancy.owner), api(tenancy.reader)
    team = tenancy.team.public_id
    listed = owner.get(f"/api/v1/rules?scope={team}&status=candidate").json()["results"]
    assert [r["id"] for r in listed] == [rule.public_id]
    # A reader reads approved rules but no candidates, and cannot decide.
    assert reader.get(f"/api/v1/rules?scope={team}&status=candidate").status_code == 403
    assert reader.get("/api/v1/rules?status=candidate").json()["results"] == []
    assert (
        reader.post(f"/api/v1/rules/{rule.public_id}/approve", {}, format="json").status_code == 403
    )
    assert owner.get("/api/v1/rules").json()["results"] == []

    wording = "Two people review every billing migration."
    approved = owner.post(
        f"/api/v1/rules/{rule.public_id}/approve", {"text": wording}, format="json"
    ).json()
    assert approved["status"] == "approved" and approved["text"] == wording
    assert approved["position"] == 1
    assert [v["text"] for v in approved["versions"]] == [CONVENTION]
    assert [r["text"] for r in reader.get("/api/v1/rules").json()["results"]] == [wording]

    second = remember_all(
        tenancy.owner,
        [("Never deploy the billing service on Fridays.", "gotcha")],
        scope=team,
    )[0]
    other = _candidate(tenancy, second)
    owner.post(f"/api/v1/rules/{other.public_id}/approve", {}, format="json")
    moved = owner.post(f"/api/v1/rules/{other.public_id}/move", {"position": 1}, format="json")
    assert moved.json()["position"] == 1
    order = [r["id"] for r in owner.get(f"/api/v1/rules?scope={team}").json()["results"]]
    assert order == [other.public_id, rule.public_id]

    rejected = owner.post(f"/api/v1/rules/{other.public_id}/reject").json()
    assert rejected["status"] == "rejected"
    assert (
        owner.post(
            f"/api/v1/rules/{other.public_id}/move", {"position": 1}, format="json"
        ).status_code
        == 409
    )
    # Rejected: more use does not propose it again while its memory says the same.
    use(api(tenancy.writer), [second.public_id], "c9")
    assert Rule.objects.get(pk=other.pk).status == RuleStatus.REJECTED


def test_approved_rules_open_context_and_briefing_and_the_mcp_resource(api, tenancy, team_memories):
    rule = _candidate(tenancy, team_memories[0])
    signed_in(tenancy.owner).post(f"/api/v1/rules/{rule.public_id}/approve", {}, format="json")
    # A rule of a scope the reader cannot read never reaches it.
    stranger = UserFactory(username="stranger")
    elsewhere = make_scope(owner=stranger, slug="elsewhere")
    foreign = remember_all(
        stranger,
        [("Elsewhere, the deploy train leaves at noon.", "convention")],
        scope=elsewhere.public_id,
    )[0]
    Rule.objects.create(
        scope=elsewhere,
        memory=foreign,
        text=foreign.content,
        status=RuleStatus.APPROVED,
        position=1,
    )
    reader = Actor(user=tenancy.reader)
    for context in (
        build_context(actor=reader, topic="deploy train", max_tokens=500),
        briefing(actor=reader, max_tokens=500),
    ):
        assert context.sections[0].name == "rules"
        assert [row.candidate.id for row in context.sections[0].rows] == [
            team_memories[0].public_id
        ]
        first_item = context.markdown.split("\n- ")[1]
        assert first_item.startswith(f"[rule] {CONVENTION}")
        assert "deploy train leaves" not in context.markdown
        assert context.tokens <= 500
    assert "deploy train leaves" not in json.dumps(api(tenancy.reader).get("/api/v1/rules").json())


def test_rules_stay_within_a_small_budget(api, tenancy, team_memories):
    rule = _candidate(tenancy, team_memories[0])
    signed_in(tenancy.owner).post(f"/api/v1/rules/{rule.public_id}/approve", {}, format="json")
    context = briefing(actor=Actor(user=tenancy.owner), max_tokens=100)
    assert context.tokens <= 100


def test_a_removed_member_no_longer_gets_the_rules(api, tenancy, team_memories):
    rule = _candidate(tenancy, team_memories[0])
    signed_in(tenancy.owner).post(f"/api/v1/rules/{rule.public_id}/approve", {}, format="json")
    gone = UserFactory(username="gone")
    add_member(tenancy.team, gone, Role.READER)
    client = api(gone)
    assert len(client.get("/api/v1/rules").json()["results"]) == 1
    tenancy.team.memberships.filter(user=gone).delete()
    assert client.get("/api/v1/rules").json()["results"] == []


def test_mcp_mark_used_counts_and_the_rules_reach_instructions_and_resource(tenancy, team_memories):
    secret = make_token(tenancy.writer)
    for conversation in ("m1", "m2", "m3"):
        call_tool(secret, "briefing", {"max_tokens": 4000, "conversation_id": conversation})
        result = call_tool(
            secret,
            "mark_used",
            {"memory_ids": [team_memories[0].public_id], "conversation_id": conversation},
        )
        assert structured(result)["counted"] == [team_memories[0].public_id]
    rule = Rule.objects.get(memory=team_memories[0])
    instructions, listed = opened(secret, "zm://rules")
    assert CONVENTION not in instructions and json.loads(listed)["results"] == []
    decisions.rule_approve(actor=Actor(user=tenancy.owner), rule=rule)
    instructions, listed = opened(secret, "zm://rules")
    assert instructions.endswith(f"- [{tenancy.team.name}] {CONVENTION}")
    assert [r["id"] for r in json.loads(listed)["results"]] == [rule.public_id]
    outsider_instructions, outsider_listed = opened(make_token(tenancy.outsider), "zm://rules")
    assert CONVENTION not in outsider_instructions + outsider_listed


def test_the_boost_is_bounded_and_lost_when_found_wrong(tenancy):
    from memories.feedback import Wrong, mark_used
    from memories.recall.recall import recall

    text = "The nightly export job writes its archives to the cold storage bucket."
    [team_copy] = remember_all(tenancy.owner, [(text, "fact")], scope=tenancy.team.public_id)
    [own_copy] = remember_all(tenancy.owner, [(text, "fact")])
    owner = Actor(user=tenancy.owner)

    def ratio() -> float:
        scores = {hit.id: hit.score for hit in recall(actor=owner, query="nightly export archives")}
        return scores[team_copy.public_id] / scores[own_copy.public_id]

    assert ratio() == pytest.approx(1.0, abs=1e-6)
    for n in range(60):
        served = replace(owner, conversation_id=f"c{n}")
        recall(actor=served, query="nightly export archives")
        mark_used(actor=owner, memory_ids=[team_copy.public_id], conversation_id=f"c{n}")
    boosted = ratio()
    assert 1.3 < boosted <= 1.4
    wrong = [Wrong(memory_id=team_copy.public_id, reason="The bucket moved.")]
    mark_used(actor=owner, memory_ids=[], wrong=wrong, conversation_id="c-last")
    assert ratio() == pytest.approx(1.0, abs=1e-6)
