"""Grants through the tenancy table: an OAuth grant answers every REST route and MCP tool as an
API token with the same restrictions does (a grant is always restricted to the scopes chosen).

- a grant restricted to the owner's personal scope: the `restricted` column;
- a removed member's grant (to the team, then removed from it): `restricted` too, since the
  only scope it had is no longer theirs;
- a read-only grant to the team: `read_only` where that refuses, and a restricted token's 403
  for what concerns the account;
- a revoked grant, and a token minted for the other resource: `revoked`.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from scopes.models import Role
from scopes.oauth.models import OAuthGrant
from scopes.services import membership_remove, token_revoke
from tests.factories import add_member
from tests.mcp_inproc import call_tool, structured
from tests.oauth.flow import API, MCP, access_token, register
from tests.security.surfaces import API_ROWS, OK, Row
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.world import answer_text, world_fixtures
from zeromemory.core.actor import Actor

GRANTS = ("restricted", "removed", "read_only", "revoked", "other_resource")


def wanted(row: Row, grant: str):
    if grant in ("revoked", "other_resource"):
        return row.expect["revoked"]
    if grant in ("restricted", "removed"):
        return row.expect["restricted"]
    if row.expect["read_only"] != OK:
        return row.expect["read_only"]
    restricted = row.expect["restricted"]
    return restricted if restricted in (403, "forbidden") else OK


def grant_tokens(world, resource: str) -> dict[str, str]:
    client_id = register()["client_id"]
    owner, removed = Client(), Client()
    owner.force_login(world.users["owner"])
    removed.force_login(world.users["removed"])
    team, personal = world.ids["team"], world.team.owner.owned_scopes.get(kind="personal")
    other = MCP if resource == API else API
    tokens = {
        "restricted": access_token(
            owner, client_id, scopes=[personal.public_id], resource=resource
        ),
        "read_only": access_token(
            owner, client_id, scopes=[team], read_only=True, resource=resource
        ),
        "other_resource": access_token(owner, client_id, scopes=[team], resource=other),
        "revoked": access_token(owner, client_id, scopes=[team], resource=resource),
    }
    token_revoke(actor=Actor(user=world.team.owner), token=OAuthGrant.objects.latest("id").token)
    add_member(world.team, world.users["removed"], Role.WRITER)
    tokens["removed"] = access_token(removed, client_id, scopes=[team], resource=resource)
    membership_remove(scope=world.team, username="removed")
    return tokens


shared_world, world = world_fixtures()


@pytest.fixture(scope="module")
def grants(shared_world, django_db_blocker) -> dict[str, dict[str, str]]:
    """Each grant's token for the API and for /mcp, minted once in the module's world (each
    test's own changes are rolled back, so every test meets the grants as minted)."""
    with django_db_blocker.unblock():
        return {resource: grant_tokens(shared_world, resource) for resource in (API, MCP)}


def cases(rows):
    return [pytest.param(row, id=row.id + (f" ({row.note})" if row.note else "")) for row in rows]


def check_blind(world, grant: str, text: str, row: Row) -> None:
    if grant in ("restricted", "removed"):
        sent = world.fill(row.path) + json.dumps(world.fill(row.body))
        assert not world.leaks(text, sent), f"{grant} saw {world.leaks(text, sent)}"


@pytest.mark.parametrize("row", cases(API_ROWS))
def test_rest(world, grants, row: Row):
    tokens = grants[API]
    for grant in GRANTS:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[grant]}")
        call = getattr(client, row.method)
        path, body = world.fill(row.path), world.fill(row.body)
        response = call(path, body, format="json") if row.body else call(path)
        expected, text = wanted(row, grant), answer_text(response)
        if expected == OK:
            assert response.status_code < 300, (grant, text)
        else:
            assert response.status_code == expected, (grant, text)
        check_blind(world, grant, text, row)


@pytest.mark.parametrize("row", cases(TOOL_ROWS))
def test_mcp(world, grants, row: Row):
    tokens = grants[MCP]
    for grant in GRANTS:
        result = call_tool(tokens[grant], row.route, world.fill(row.body))
        answer = structured(result)
        expected = wanted(row, grant)
        if expected == OK:
            assert not result.is_error, (grant, answer)
        else:
            assert result.is_error and answer["error"]["code"] == expected, (grant, answer)
        check_blind(world, grant, json.dumps(answer), row)
