"""Insights that stay in their scope (issue 37, finding 3): a read counts only in the scopes it
searched, as its credential allowed at that moment; the queries of others that found nothing
are shown only to a scope's admins acting as themselves."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from memories.insights.fold import insights_fold
from memories.models import ActivityLog, EmptyRead
from scopes.models import Role
from scopes.services import membership_remove
from tests.factories import UserFactory, add_member, make_token
from tests.oauth.flow import API, access_token, register

pytestmark = pytest.mark.usefixtures("kinds_seeded")


def bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def found_nothing(client, query: str, **body) -> None:
    response = client.post("/api/v1/recall", {"query": query, **body}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["results"] == []


def quality(client, scope) -> dict:
    response = client.get("/api/v1/insights", {"scope": scope.public_id, "days": 7})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_read_counts_only_in_the_scopes_it_searched(tenancy):
    team = tenancy.team
    personal = tenancy.owner.owned_scopes.get(kind="personal")
    # The owner's token restricted to the personal scope searches nothing of the team.
    restricted = bearer(make_token(tenancy.owner, scopes=[personal]))
    found_nothing(restricted, "which llama owns the lighthouse")
    # An older fold attributed it to every scope of the user: the next fold takes it back.
    read = ActivityLog.objects.get(query="which llama owns the lighthouse")
    EmptyRead.objects.create(
        scope=team, activity_id=read.pk, user=tenancy.owner, operation="recall", query=read.query,
        created_at=read.created_at,
    )  # fmt: skip
    # A person asks before joining the team, while a member, and after being removed.
    joiner = UserFactory(username="joiner")
    client = tenancy.client(joiner)
    found_nothing(client, "asked before joining the team")
    add_member(team, joiner, Role.WRITER)
    found_nothing(client, "asked while a member of the team")
    membership_remove(scope=team, username="joiner")
    found_nothing(client, "asked after leaving the team")
    insights_fold(days=1)

    owner = tenancy.client(tenancy.owner)
    team_answer = quality(owner, team)
    queries = [q["query"] for q in team_answer["quality"]["empty_queries"]]
    assert queries == ["asked while a member of the team"]
    assert team_answer["daily"][-1]["empty_reads"] == 1
    mine = [q["query"] for q in quality(owner, personal)["quality"]["empty_queries"]]
    assert mine == ["which llama owns the lighthouse"]


def test_others_empty_queries_only_to_admins_acting_as_themselves(tenancy):
    team = tenancy.team
    found_nothing(tenancy.client(tenancy.writer), "where is the pager rota kept")
    insights_fold(days=1)
    browser = Client()
    browser.force_login(tenancy.owner)
    session = APIClient()
    session.force_login(tenancy.owner)
    grant = access_token(browser, register()["client_id"], scopes=[team.public_id], resource=API)
    credentials = {
        "session": session,
        "full token": tenancy.client(tenancy.owner),
        "read-only token": tenancy.client(tenancy.owner, read_only=True),
        "restricted token": tenancy.client(tenancy.owner, scopes=[team]),
        "OAuth grant": bearer(grant),
    }
    for name, client in credentials.items():
        answer = quality(client, team)["quality"]
        seen = [q["query"] for q in answer["empty_queries"]]
        as_self = name in ("session", "full token")
        assert seen == (["where is the pager rota kept"] if as_self else []), name
        assert answer["empty_queries_of_others_hidden"] is not as_self, name
    # The dashboard's insights page shows them to the admin in a session.
    assert "where is the pager rota kept" in browser.get(f"/insights/{team.public_id}/").text
