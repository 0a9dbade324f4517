"""The MCP endpoint as a web client meets it: without the ASGI lifespan, the rate limit, no
sessions (any web process answers any request), and hostile bodies.
"""

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.factories import make_token
from tests.memories.mcp_support import (
    CLIENT,
    TOOLS,
    answer,
    ok,
    over_http,
    post_tools_call,
)
from tests.served import start_uvicorn, stop_process_group

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def bare_server(django_db_setup, django_db_blocker):
    """A server started without the ASGI lifespan, and with a low rate limit."""
    with django_db_blocker.unblock():
        # A daily window: no window boundary falls inside a test.
        proc, base = start_uvicorn("--lifespan", "off", ZM_API_RATE="4/day")
    yield base
    output = stop_process_group(proc)
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


def test_every_request_stands_alone_with_its_own_token(web_url, tenancy):
    """The endpoint is stateless: no session is opened, a tool call needs no initialize, and
    each call answers for the token it carries."""
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
    opened = httpx2.post(f"{web_url}/mcp", json=opening, headers=owner, timeout=10)
    assert opened.status_code == 200 and "Mcp-Session-Id" not in opened.headers

    def scope_ids(user) -> set[str]:
        response = post_tools_call(web_url, {"Authorization": f"Bearer {make_token(user)}"})
        assert response.status_code == 200, response.text
        return {scope["id"] for scope in response.json()["result"]["structuredContent"]["scopes"]}

    assert tenancy.team.public_id in scope_ids(tenancy.owner)
    assert tenancy.team.public_id not in scope_ids(tenancy.outsider)


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer without sticky sessions: each request goes to the next server."""

    def __init__(self, bases: list[str]) -> None:
        self.ports = [httpx2.URL(base).port for base in bases]
        self.served: list[int] = []
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self.ports[len(self.served) % len(self.ports)]
        self.served.append(port)
        request.url = request.url.copy_with(port=port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_the_tools_work_behind_two_web_processes_without_sticky_sessions(
    web_url, tenancy, team, kinds_seeded
):
    # The module's web process and a second one on the same database.
    second, second_url = start_uvicorn()
    try:
        balancer = RoundRobin([web_url, second_url])
        headers = {"Authorization": f"Bearer {make_token(tenancy.writer)}"}

        async def main() -> tuple[dict, dict]:
            async with (
                httpx2.AsyncClient(headers=headers, transport=balancer, timeout=60) as http,
                streamable_http_client(f"{web_url}/mcp", http_client=http) as (r, w),
                ClientSession(r, w, client_info=CLIENT) as session,
            ):
                await session.initialize()
                tools = await session.list_tools()
                assert {tool.name for tool in tools.tools} == TOOLS
                written = ok(
                    await session.call_tool(
                        "remember",
                        {
                            "content": "Deploys go out on Tuesdays.",
                            "kind": "decision",
                            "scope": team,
                        },
                    )
                )
                found = ok(await session.call_tool("recall", {"query": "when do deploys go out"}))
                return written, found

        written, found = anyio.run(main)
        assert written["id"] in {hit["id"] for hit in found["results"]}
        assert set(balancer.served) == set(balancer.ports)  # both servers answered
    finally:
        output = stop_process_group(second)
    assert "Traceback" not in output, output


def test_malformed_bodies_over_http_never_answer_5xx(web_url, tenancy):
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
        response = httpx2.post(f"{web_url}/mcp", content=body, headers=headers, timeout=30)
        assert response.status_code < 500, (label, response.status_code, response.text[:300])
        assert "internal" not in response.text, (label, response.text[:300])


def test_get_and_delete_answer_405_and_hold_no_stream(bare_server, tenancy):
    """Stateless: there is no event stream to open and no session to end."""
    headers = {
        "Authorization": f"Bearer {make_token(tenancy.owner)}",
        "Accept": "text/event-stream",
    }
    for method in ("GET", "DELETE"):
        answer = httpx2.request(method, f"{bare_server}/mcp", headers=headers, timeout=10)
        assert answer.status_code == 405 and answer.headers["allow"] == "POST"
        assert answer.json()["error"]["code"] == "method_not_allowed"
    assert httpx2.get(f"{bare_server}/mcp", timeout=10).status_code == 401  # no token: 401 first
