"""A database outage under a writer: the embedded database of a running `make run` is stopped and
started again. Every surface answers 503 `unavailable` with Retry-After meanwhile, the server
logs one line when the outage starts and one when it ends, and it serves again by itself with
every acknowledged write kept."""

from __future__ import annotations

import http.cookiejar
import json
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from email.message import Message

import anyio
import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.served import BASE_DIR, Served, request, wait_for
from zeromemory import embedded_db

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not settings.EMBEDDED_DATABASE, reason="stops serve's own embedded database"
    ),
]

PASSWORD = "outage test password"
COUNT = """
from memories.models import Memory, Provenance
print(Memory.objects.count(), Provenance.objects.count())
"""


@dataclass
class Writer:
    """Writes memories in a loop and keeps every answer."""

    url: str
    token: str
    stop: threading.Event = field(default_factory=threading.Event)
    acknowledged: list[str] = field(default_factory=list)
    refused: list[tuple[int, str, str | None]] = field(default_factory=list)

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            body = {
                "content": f"Outage drill note {n}: deploys wait for check {n * 7}.",
                "kind": "fact",
            }
            try:
                status, headers, text = request(
                    f"{self.url}/api/v1/memories",
                    method="POST",
                    body=body,
                    headers={"Authorization": f"Bearer {self.token}"},
                )
            except OSError as exc:
                self.refused.append((0, str(exc), None))
                continue
            if status == 201:
                self.acknowledged.append(json.loads(text)["id"])
            else:
                code = json.loads(text)["error"]["code"]
                self.refused.append((status, code, headers.get("Retry-After")))
                time.sleep(0.05)


def signed_in_opener(url: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{url}/login/", timeout=10).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    form = urllib.parse.urlencode(
        {"username": "writer", "password": PASSWORD, "csrfmiddlewaretoken": csrf}
    ).encode()
    login = urllib.request.Request(f"{url}/login/", data=form, headers={"Referer": url})  # noqa: S310
    opener.open(login, timeout=10).read()
    return opener


def open_page(opener: urllib.request.OpenerDirector, url: str) -> tuple[int, Message, str]:
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read().decode()


def tool_error_code(result) -> str | None:
    if not result.is_error:
        return None
    return json.loads(result.content[0].text)["error"]["code"]


@pytest.fixture
def served(tmp_path):
    served = Served(tmp_path)
    try:
        served.wait_ready()
        # The drill stops the database of a running deployment: the worker's cluster up too
        # (/readyz wants its heartbeat), not still starting, as it would be during the outage.
        wait_for(lambda: request(f"{served.url}/readyz")[0] == 200, timeout=180, what="the worker")
        yield served
    finally:
        served.cleanup()


def test_database_outage_answers_unavailable_and_heals(served):
    token = served.create_user_with_token("writer", PASSWORD)
    auth = {"Authorization": f"Bearer {token}"}
    pgdata = served.data_dir / "pgdata"
    opener = signed_in_opener(served.url)
    assert open_page(opener, f"{served.url}/")[0] == 200
    writer = Writer(served.url, token)
    thread = threading.Thread(target=writer.run, daemon=True)
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_stdio", "--token", token],
        env=served.env,
        cwd=str(BASE_DIR),
    )
    seen: dict[str, object] = {}

    async def drill() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert tool_error_code(await session.call_tool("list_scopes", {})) is None
            thread.start()
            await anyio.to_thread.run_sync(
                lambda: wait_for(lambda: len(writer.acknowledged) >= 5, timeout=60, what="writes")
            )
            socket_dir = await anyio.to_thread.run_sync(embedded_db.stop_server, pgdata)
            assert socket_dir is not None
            try:
                await anyio.to_thread.run_sync(
                    lambda: wait_for(lambda: writer.refused, timeout=30, what="a refused write")
                )
                seen["rest"] = request(f"{served.url}/api/v1/me", headers=auth)
                seen["page"] = open_page(opener, f"{served.url}/")
                seen["mcp_http"] = request(
                    f"{served.url}/mcp",
                    method="POST",
                    body={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    headers={**auth, "Accept": "application/json, text/event-stream"},
                )
                seen["tool"] = tool_error_code(await session.call_tool("list_scopes", {}))
                seen["healthz"] = request(f"{served.url}/healthz")[0]
                # Writes go on through the outage: a score of refusals, not a fixed time.
                await anyio.to_thread.run_sync(
                    lambda: wait_for(
                        lambda: len(writer.refused) >= 20, timeout=30, what="20 refused writes"
                    )
                )
            finally:
                await anyio.to_thread.run_sync(
                    lambda: embedded_db.start_server(pgdata, socket_dir=socket_dir)
                )
            refused_during = len(writer.refused)
            before = len(writer.acknowledged)
            await anyio.to_thread.run_sync(
                lambda: wait_for(
                    lambda: len(writer.acknowledged) >= before + 5,
                    timeout=60,
                    what="writes to succeed again",
                )
            )
            seen["tool_after"] = tool_error_code(await session.call_tool("list_scopes", {}))
            seen["refused_after"] = len(writer.refused) - refused_during

    try:
        anyio.run(drill)
    finally:
        writer.stop.set()
        if thread.is_alive():
            thread.join(timeout=30)

    print(
        f"outage drill: {len(writer.acknowledged)} writes acknowledged, "
        f"{len(writer.refused)} refused with 503 unavailable"
    )
    # Every surface said the same thing while the database was gone.
    diagnosis = f"{seen}\nrefused: {writer.refused[:20]}\n{served.log()}"
    status, headers, body = seen["rest"]
    assert status == 503 and json.loads(body)["error"]["code"] == "unavailable", diagnosis
    assert int(headers["Retry-After"]) > 0, diagnosis
    status, headers, page = seen["page"]
    assert status == 503 and int(headers["Retry-After"]) > 0 and "<html" in page, diagnosis
    status, headers, body = seen["mcp_http"]
    assert status == 503 and json.loads(body)["error"]["code"] == "unavailable", diagnosis
    assert int(headers["Retry-After"]) > 0, diagnosis
    assert seen["tool"] == "unavailable", diagnosis
    assert seen["healthz"] == 503, diagnosis
    assert writer.refused and seen["refused_after"] <= 2, diagnosis
    assert {(status, code) for status, code, _ in writer.refused} == {(503, "unavailable")}, (
        diagnosis
    )
    assert all(retry is not None and int(retry) > 0 for _, _, retry in writer.refused), diagnosis

    # It came back by itself: same processes, tools work again, nothing acknowledged was lost.
    assert seen["tool_after"] is None, diagnosis
    for memory_id in set(writer.acknowledged):
        status, _, _ = request(f"{served.url}/api/v1/memories/{memory_id}", headers=auth)
        assert status == 200, memory_id
    memories, provenance = map(int, served.django(COUNT).split())
    assert provenance == len(writer.acknowledged)  # refused writes left nothing behind
    assert memories == len(set(writer.acknowledged))

    log = served.log()
    # Once per web process that met the outage, not once per request.
    assert 1 <= log.count("database unavailable, answering 503") <= settings.WEB_PROCESSES, log
    assert log.count("database available again") == log.count("answering 503"), log
    assert "Internal Server Error" not in log and "Service Unavailable" not in log, log
    # The only tracebacks are django-q2's pusher, once per reconnect attempt (every 10 s).
    lines = log.splitlines()
    tracebacks = [i for i, line in enumerate(lines) if line.startswith("Traceback")]
    origins = {
        next(lines[j] for j in range(i, -1, -1) if lines[j][:4].isdigit()).split(": ")[0][24:]
        for i in tracebacks
    }
    assert origins <= {"ERROR django-q"}, log
    assert served.stop() == 0
    assert served.processes() == []
