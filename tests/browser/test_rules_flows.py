"""The learning loop end to end: an agent's token reports a convention used in three
conversations, it appears as a candidate, a scope admin approves it in the dashboard, and the
next build_context, briefing, MCP initialization and `zm://rules` carry it first. A reader
cannot approve; a rule of another scope never appears; mark_used of a memory the caller cannot
read answers not_found and changes nothing."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from playwright.sync_api import expect
from rest_framework.test import APIClient

from memories.models import ReportedUse, Rule, RuleStatus, UsageCounter
from memories.services.remember import RememberInput, memory_remember
from scopes.models import Role
from tests.factories import UserFactory, add_member, make_scope, make_token
from tests.mcp_inproc import call_tool, opened, structured
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.django_db(transaction=True)

CONVENTION = "Every schema migration in the billing service is reviewed by two people."
WORDING = "Two people review every billing schema migration."
FOREIGN = "Elsewhere, deploys leave on the noon train."


def remember(user, content: str, scope, kind: str = "convention"):
    request = RememberInput(content=content, kind=kind, scope=scope.public_id)
    return memory_remember(actor=Actor(user=user), request=request).memory


def api(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def off_the_loop(function, *args):
    """Run an in-process MCP call on a thread of its own: Playwright keeps an event loop in
    this one, where async_to_sync cannot run."""

    def call():
        try:
            return function(*args)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


def test_a_used_convention_becomes_a_rule_that_opens_every_context(session):
    admin = UserFactory(username="ada")
    agent_user = UserFactory(username="bot")
    reader = UserFactory(username="rex")
    outsider = UserFactory(username="otto")
    team = make_scope(owner=admin, slug="billing")
    add_member(team, agent_user, Role.WRITER)
    add_member(team, reader, Role.READER)
    convention = remember(admin, CONVENTION, team)
    remember(admin, "The billing service stores invoices for ten years.", team, kind="fact")
    # Another team's approved rule: it must never reach this team's readers.
    elsewhere = make_scope(owner=outsider, slug="elsewhere")
    foreign = remember(outsider, FOREIGN, elsewhere)
    Rule.objects.create(
        scope=elsewhere, memory=foreign, text=FOREIGN, status=RuleStatus.APPROVED, position=1
    )

    agent = api(make_token(agent_user))
    for conversation in ("session-1", "session-2", "session-3"):
        # mark_used counts only what a read served to the agent in that conversation.
        briefed = agent.get("/api/v1/briefing", {"conversation_id": conversation})
        assert briefed.status_code == 200, briefed.content
        answer = agent.post(
            "/api/v1/memories/used",
            {"memory_ids": [convention.public_id], "conversation_id": conversation},
            format="json",
        )
        assert answer.status_code == 200, answer.content
    rule = Rule.objects.get(memory=convention)
    assert rule.status == RuleStatus.CANDIDATE

    # mark_used of a memory the caller cannot read: not_found, nothing recorded.
    uses = ReportedUse.objects.count()
    refused = off_the_loop(
        call_tool,
        make_token(outsider),
        "mark_used",
        {"memory_ids": [convention.public_id], "conversation_id": "x"},
    )
    assert refused.is_error and structured(refused)["error"]["code"] == "not_found"
    assert ReportedUse.objects.count() == uses
    assert UsageCounter.objects.get(memory=convention).uses == 3

    # A reader sees no candidate and cannot approve.
    page = session.page(reader)
    page.goto("/rules/")
    expect(page.get_by_text("No rules here.")).to_be_visible()
    denied = api(make_token(reader)).post(f"/api/v1/rules/{rule.public_id}/approve", {})
    assert denied.status_code == 403
    assert Rule.objects.get(pk=rule.pk).status == RuleStatus.CANDIDATE

    # The admin approves it in the dashboard, in new words.
    page = session.page(admin)
    page.goto("/")
    page.get_by_role("link", name="Rules", exact=True).click()
    card = page.locator(f"#{rule.public_id}")
    expect(card).to_contain_text(CONVENTION)
    expect(card).to_contain_text("used in 3 conversations")
    session.screenshot(page, "candidate")
    card.get_by_label("Wording").fill(WORDING)
    card.get_by_role("button", name="Approve").click()
    expect(page.get_by_text("Rule approved.", exact=True)).to_be_visible()
    rule.refresh_from_db()
    assert rule.status == RuleStatus.APPROVED and rule.text == WORDING
    assert [v.text for v in rule.versions.all()] == [CONVENTION]
    page.get_by_label("Status").select_option("approved")
    expect(page.locator(f"#{rule.public_id}")).to_contain_text(WORDING)
    session.screenshot(page, "approved")

    # The next build_context and briefing open with it.
    reading = api(make_token(reader))
    context = reading.post("/api/v1/context", {"topic": "deploy trains"}, format="json").json()
    brief = reading.get("/api/v1/briefing").json()
    for answer in (context, brief):
        first = answer["sections"][0]
        assert first["name"] == "rules"
        assert [(row["kind"], row["content"]) for row in first["rows"]] == [("rule", WORDING)]
        assert answer["markdown"].split("\n- ", 1)[1].startswith(f"[rule] {WORDING}")
        assert FOREIGN not in json.dumps(answer)

    # MCP: the initialization's instructions and zm://rules carry it.
    instructions, listed = off_the_loop(opened, make_token(reader), "zm://rules")
    assert WORDING in instructions and FOREIGN not in instructions
    assert instructions.index("Team rules") < instructions.index(WORDING)
    rules = json.loads(listed)["results"]
    assert [r["text"] for r in rules] == [WORDING]
    # The other team's reader gets its own rule only.
    instructions, listed = off_the_loop(opened, make_token(outsider), "zm://rules")
    assert WORDING not in instructions and FOREIGN in instructions
    assert [r["text"] for r in json.loads(listed)["results"]] == [FOREIGN]
