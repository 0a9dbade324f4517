"""The dashboard and the admin share the user's API rate: past it a page answers 429 in the
user's language with Retry-After, and the same budget holds across pages, REST and MCP."""

from __future__ import annotations

from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured


def test_pages_count_against_the_users_rate(tenancy, client, settings):
    settings.API_RATE = "3/day"
    client.force_login(tenancy.writer)
    assert [client.get("/", {"q": "deploys"}).status_code for _ in range(3)] == [200] * 3
    refused = client.get("/", {"q": "deploys"})
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 86_400
    assert "Too many requests" in refused.content.decode()
    german = client.get("/", HTTP_ACCEPT_LANGUAGE="de")
    assert german.status_code == 429 and "Zu viele Anfragen" in german.content.decode()
    assert client.post("/remember/", {"content": "x", "kind": "fact"}).status_code == 429
    # The same user's token is held to the same budget, over REST and MCP.
    token = make_token(tenancy.writer)
    rest = client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert rest.status_code == 429
    assert structured(call_tool(token, "list_scopes", {}))["error"]["code"] == "rate_limited"


def test_the_api_does_not_count_a_call_twice(tenancy, api, settings):
    settings.API_RATE = "3/day"
    writer = api(tenancy.writer)
    assert [writer.get("/api/v1/me").status_code for _ in range(4)] == [200, 200, 200, 429]


def test_other_users_and_signed_out_pages_are_not_counted(tenancy, client, settings):
    settings.API_RATE = "2/day"
    for _ in range(4):
        assert client.get("/login/").status_code == 200
    client.force_login(tenancy.writer)
    client.get("/")
    client.get("/")
    assert client.get("/").status_code == 429
    client.force_login(tenancy.reader)
    assert client.get("/").status_code == 200


def test_a_refused_page_logs_one_line_and_no_traceback(tenancy, client, caplog):
    client.force_login(tenancy.reader)
    with caplog.at_level("WARNING", logger="django.request"):
        refused = client.post(f"/scopes/{tenancy.team.public_id}/rename/", {"name": "Mine now"})
    assert refused.status_code == 403
    assert [record.exc_info for record in caplog.records] == [None]
