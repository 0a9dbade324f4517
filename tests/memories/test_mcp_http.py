"""The MCP endpoint as a web client meets it: without the ASGI lifespan, the rate limit, sessions
bound to their token, and hostile bodies.
"""

import httpx2
import pytest
from mcp import ClientSession

from tests.factories import make_token
from tests.memories.mcp_support import (
    answer,
    ok,
    over_http,
    post_tools_call,
    start_uvicorn,
    stop,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def bare_server(django_db_setup, django_db_blocker):
    """A server started without the ASGI lifespan, and with a low rate limit."""
    with django_db_blocker.unblock():
        proc, base = start_uvicorn("--lifespan", "off", ZM_API_RATE="4/min")
    yield base
    output = stop(proc)
    assert "Traceback" not in output, output


def test_the_endpoint_works_without_the_asgi_lifespan_and_with_a_slash(bare_server, tenancy):
    async def script(session: ClientSession):
        return ok(await session.call_tool("list_scopes", {}))

    scopes = over_http(bare_server, make_token(tenancy.owner), script, path="/mcp/")
    assert tenancy.team.public_id in {scope["id"] for scope in scopes["scopes"]}


def test_calls_over_the_rate_answer_rate_limited(bare_server, tenancy):
    async def script(session: ClientSession):
        return [await session.call_tool("list_scopes", {}) for _ in range(5)]

    results = over_http(bare_server, make_token(tenancy.owner), script)
    assert [result.is_error for result in results] == [False] * 4 + [True]
    error = answer(results[-1])["error"]
    assert error["code"] == "rate_limited" and error["details"]["retry_after"] > 0


def test_a_session_is_bound_to_the_token_that_opened_it(server, tenancy):
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}
    owner = {"Authorization": f"Bearer {make_token(tenancy.owner)}", **accept}
    opened = httpx2.post(f"{server}/mcp", json=opening, headers=owner, timeout=10)
    assert opened.status_code == 200
    session = {"Mcp-Session-Id": opened.headers["Mcp-Session-Id"]}
    outsider = {"Authorization": f"Bearer {make_token(tenancy.outsider)}", **session}
    assert post_tools_call(server, outsider).status_code == 404
    assert post_tools_call(server, {**owner, **session}).status_code == 200


def test_malformed_bodies_over_http_never_answer_5xx(server, tenancy):
    """What the SDK parses itself (the JSON-RPC envelope) holds against hostile bodies too."""
    headers = {
        "Authorization": f"Bearer {make_token(tenancy.owner)}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    call = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        b'"params": {"name": "recall", "arguments": {"query": %s}}}'
    )
    bodies = {
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "deep arguments": call % (b"[" * 50_000 + b"]" * 50_000),
        "lone surrogate": call % b'"\\ud800"',
        "nul": call % b'"a\\u0000b"',
        "not utf-8": call % b'"\xff\xfe"',
        "huge number": call % (b"1" * 5000),
        "not json": b"{",
    }
    for label, body in bodies.items():
        response = httpx2.post(f"{server}/mcp", content=body, headers=headers, timeout=30)
        assert response.status_code < 500, (label, response.status_code, response.text[:300])
        assert "internal" not in response.text, (label, response.text[:300])
