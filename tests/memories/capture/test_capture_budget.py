"""The per-user extraction budget (ZM_EXTRACTION_DAILY_TOKENS) counts the spend rows that the
insights report: the user's extraction tokens of the UTC day, in every scope."""

from __future__ import annotations

from memories.models import ChunkStatus
from scopes.erasure import account_delete
from tests.fakes.anthropic_api import memories_answer
from tests.memories.capture.support import DECISION, candidate, run
from zeromemory.core.actor import Actor

PASSWORD = "correct horse battery"  # every factory user's
TUESDAYS = "user: We deploy on Tuesdays and Thursdays, never on Fridays, by agreement."
STAGING = "user: We agreed that the staging database is reset every Monday morning at six."


def extraction_cost(tenancy) -> dict:
    response = tenancy.client(tenancy.owner).get(
        "/api/v1/insights", {"scope": tenancy.team.public_id, "days": 7}
    )
    assert response.status_code == 200, response.content
    [cost] = [path for path in response.json()["cost"] if path["path"] == "extraction"]
    return cost


def test_the_users_budget_counts_the_spend_the_insights_report(
    tenancy, api, fake_anthropic, extract, settings, django_capture_on_commit_callbacks
):
    fake_anthropic.script(memories_answer([DECISION]))
    first = extract(scope=tenancy.team.public_id)
    first.refresh_from_db()
    assert first.status == ChunkStatus.EXTRACTED
    cost = extraction_cost(tenancy)
    spent = cost["tokens"]
    assert spent == first.tokens_used > 0 and cost["calls"] == 1 and cost["budget_per"] == "user"

    # A budget of what the insights report is spent: the same user's next chunk waits for
    # tomorrow, in another scope too (the budget is the user's, over all their scopes).
    settings.EXTRACTION_DAILY_TOKENS = spent
    second = extract(TUESDAYS)
    second.refresh_from_db()
    assert second.scope != tenancy.team
    assert second.status == ChunkStatus.DEFERRED and "budget" in second.error
    # Another user's day is their own.
    fake_anthropic.script(
        memories_answer([candidate("Staging is reset every Monday.", "fact", 0.95, STAGING[6:])])
    )
    owners = run(api(tenancy.owner), STAGING, django_capture_on_commit_callbacks,
                 scope=tenancy.team.public_id)  # fmt: skip
    owners.refresh_from_db()
    assert owners.status == ChunkStatus.EXTRACTED
    # The scope's figure is both users' spend, one row each.
    assert extraction_cost(tenancy)["tokens"] == spent + owners.tokens_used
    # One token more than the writer spent, and their chunks go on.
    settings.EXTRACTION_DAILY_TOKENS = spent + 1
    fake_anthropic.script(memories_answer([DECISION]))
    third = extract(TUESDAYS + " Always.", scope=tenancy.team.public_id)
    third.refresh_from_db()
    assert third.status == ChunkStatus.EXTRACTED
    assert len(fake_anthropic.requests) == 3


def test_an_erased_accounts_spend_stays_in_the_scopes_figures(
    tenancy, fake_anthropic, extract, settings
):
    fake_anthropic.script(memories_answer([DECISION]))
    chunk = extract(scope=tenancy.team.public_id)
    chunk.refresh_from_db()
    before = extraction_cost(tenancy)
    assert before["tokens"] == chunk.tokens_used > 0
    account_delete(actor=Actor(user=tenancy.writer), password=PASSWORD)
    after = extraction_cost(tenancy)
    assert (after["tokens"], after["calls"]) == (before["tokens"], before["calls"])


def test_a_user_deleted_outside_erasure_leaves_their_spend_in_the_scopes_figures(
    tenancy, fake_anthropic, extract
):
    fake_anthropic.script(memories_answer([DECISION]))
    chunk = extract(scope=tenancy.team.public_id)
    chunk.refresh_from_db()
    spent = extraction_cost(tenancy)["tokens"]
    assert spent == chunk.tokens_used > 0
    chunk.user.delete()  # as the Django admin deletes a user
    assert extraction_cost(tenancy)["tokens"] == spent
