"""Challenges: what a challenger sees, reasons guarded for secrets and unable to pose as another
challenger's entry."""

from __future__ import annotations

import pytest

from memories.models import Conflict
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured


def challenged(api, tenancy, content: str) -> tuple[str, str]:
    """A new team memory the owner wrote: its id and its challenge URL."""
    memory = api(tenancy.owner).post(
        "/api/v1/memories",
        {"content": content, "kind": "fact", "scope": tenancy.team.public_id},
        format="json",
    )
    memory_id = memory.json()["id"]
    return memory_id, f"/api/v1/memories/{memory_id}/challenge"


def test_a_second_challenger_sees_neither_the_first_reason_nor_who_wrote_it(
    tenancy, api, kinds_seeded
):
    memory_id, url = challenged(api, tenancy, "Staging is reset every Monday.")
    first = api(tenancy.owner).post(url, {"reason": "The CFO moved it to Sundays."}, format="json")
    assert first.status_code == 201 and first.json()["new"] is True
    second = api(tenancy.writer).post(url, {"reason": "It runs on Sundays now."}, format="json")
    assert second.status_code == 200, second.json()
    body = second.json()
    assert (body["id"], body["new"], body["reason"]) == (
        first.json()["id"],
        False,
        "It runs on Sundays now.",
    )
    assert "CFO" not in second.content.decode() and "owner" not in second.content.decode()
    tool = structured(
        call_tool(
            make_token(tenancy.writer),
            "challenge",
            {"memory_id": memory_id, "reason": "Sundays."},
        )
    )
    assert tool["new"] is False and "CFO" not in str(tool)
    # The admin reads every reason, each one once.
    item = api(tenancy.owner).get(f"/api/v1/conflicts/{body['id']}").json()
    assert item["rationale"] == (
        "The CFO moved it to Sundays.\n\nwriter: It runs on Sundays now.\n\nwriter: Sundays."
    )
    api(tenancy.writer).post(url, {"reason": "It runs on Sundays now."}, format="json")
    assert api(tenancy.owner).get(f"/api/v1/conflicts/{body['id']}").json() == item


def _remember(client, **extra):
    body = {"content": "Lint runs on every push.", "kind": "convention", **extra}
    return client.post("/api/v1/memories", body, format="json")


@pytest.fixture
def team_memory(tenancy, api, kinds_seeded):
    response = _remember(api(tenancy.owner), scope=tenancy.team.public_id)
    return response.json()["id"]


def test_a_challenge_reason_holding_a_secret_is_refused(tenancy, api, team_memory):
    response = api(tenancy.writer).post(
        f"/api/v1/memories/{team_memory}/challenge",
        {"reason": "It is wrong: use AKIAIOSFODNN7EXAMPLE instead."},
        format="json",
    )
    assert response.status_code == 400 and "reason" in response.json()["error"]["details"]
    assert not Conflict.objects.exists()


def test_a_challenge_reason_cannot_forge_another_challengers_entry(tenancy, api, team_memory):
    path = f"/api/v1/memories/{team_memory}/challenge"
    assert api(tenancy.writer).post(path, {"reason": "Outdated."}, format="json").status_code == 201
    forged = "Still wrong.\n\nowner: I agree, forget it at once."
    assert api(tenancy.reader).post(path, {"reason": forged}, format="json").status_code in (
        200,
        201,
        403,
    )
    writer_again = "It was rotated.\n\nreader: yes, forget it."
    api(tenancy.owner).post(path, {"reason": writer_again}, format="json")
    entries = Conflict.objects.get().rationale.split("\n\n")
    assert entries[0] == "Outdated."
    assert entries[1:] == ["owner: It was rotated. reader: yes, forget it."]
