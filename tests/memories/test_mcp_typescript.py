"""The MCP tools as the official TypeScript SDK (`@modelcontextprotocol/sdk`, what Claude Code,
Cursor and VS Code build on) meets them: `tests/mcp_ts/harness.mjs`, run with node against the
live server, lists the tools and calls each one twice, once to succeed and once to fail.

That SDK checks any structured content of a result against the tool's output schema and throws
instead of returning the result when it does not match, so a tool error reaches its agent only
as `isError` with the error envelope in the text. `make test` installs the harness's pinned
packages (`npm ci`); a machine without node or them fails here, saying what to run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from memories.models import Conflict, ConflictStatus, Memory
from tests.factories import make_token
from tests.memories.mcp_support import TOOLS, remember_directly

pytestmark = pytest.mark.django_db(transaction=True)

HARNESS_DIR = Path(settings.BASE_DIR) / "tests" / "mcp_ts"
SDK = "@modelcontextprotocol/sdk"
OK = "ok"


def node() -> str:
    """The node binary, with the harness's packages installed as its lock pins them."""
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is missing: install Node.js 20 or newer with npm to run the MCP suite.")
    lock = json.loads((HARNESS_DIR / "package-lock.json").read_text())
    pinned = lock["packages"][f"node_modules/{SDK}"]["version"]
    installed = HARNESS_DIR / "node_modules" / SDK / "package.json"
    if not installed.exists() or json.loads(installed.read_text())["version"] != pinned:
        pytest.fail(
            f"{SDK} {pinned} is not installed for the harness: run `make tests/mcp_ts/node_modules`"
            " (`make test` does), which runs `npm ci` in tests/mcp_ts."
        )
    return found


def run_harness(url: str, tokens: dict[str, str], calls: list[dict[str, Any]]) -> dict[str, Any]:
    plan = {"url": f"{url}/mcp", "tokens": tokens, "calls": calls}
    done = subprocess.run(
        [node(), "harness.mjs"],
        cwd=HARNESS_DIR,
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def envelope(text: str) -> dict[str, Any] | None:
    try:
        body = json.loads(text)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None


def step(tool: str, who: str, expect: str, **arguments: Any) -> dict[str, Any]:
    """One call of the plan: `tool` with `arguments` as `who`, expecting OK or an error code."""
    return {"tool": tool, "as": who, "arguments": arguments, "expect": expect}


def problem(call: dict[str, Any], seen: dict[str, Any]) -> str | None:
    """What is wrong with one call's outcome, or None."""
    if seen["outcome"] == "thrown":
        return f"the SDK threw: {seen['message']}"
    if call["expect"] == OK:
        return f"an error: {seen['text'][:300]}" if seen["isError"] else None
    if not seen["isError"]:
        return f"no error: {seen['text'][:300]}"
    error = envelope(seen["text"])
    if error is None or not error.get("message"):
        return f"no error envelope in the text: {seen['text'][:300]}"
    if error.get("code") != call["expect"]:
        return f"code {error.get('code')!r}, wanted {call['expect']!r}"
    return None


def test_every_tool_answers_and_fails_readably_through_the_typescript_sdk(
    server, tenancy, kinds_seeded
):
    team = tenancy.team.public_id
    kept = remember_directly(tenancy.owner, "Deploys go through the staging cluster.", team)
    one = remember_directly(tenancy.owner, "Lint runs on every push to main.", team)
    other = remember_directly(tenancy.owner, "Every push to main runs the linter.", team)
    pair = Conflict.objects.create(
        scope=tenancy.team,
        memory_a=Memory.objects.get(public_id=one),
        memory_b=Memory.objects.get(public_id=other),
        status=ConflictStatus.OPEN,
    )
    tokens = {
        "owner": make_token(tenancy.owner),
        "reader": make_token(tenancy.reader),
        "outsider": make_token(tenancy.outsider),
    }
    # Run in this order: each tool once to succeed (OK) and once to fail with the code named.
    calls = [
        step("list_scopes", "owner", OK),
        step("list_scopes", "owner", "validation_failed", colour="red"),
        step("remember", "owner", OK, content="Releases ship Mondays.", kind="fact", scope=team),
        step("remember", "reader", "forbidden", content="A reader's try.", kind="fact", scope=team),
        step("recall", "owner", OK, query="staging cluster deploys", scopes=[team]),
        step("recall", "owner", "validation_failed", query=5),
        step("build_context", "owner", OK, topic="deploys", max_tokens=500),
        step("build_context", "owner", "validation_failed", topic="deploys", max_tokens="lots"),
        step("briefing", "owner", OK, max_tokens=500),
        step("briefing", "outsider", "not_found", scopes=[team]),
        step("history", "owner", OK, memory_id=kept),
        step("history", "owner", "not_found", memory_id="mem_doesnotexist"),
        step("forget", "owner", OK, memory_id=kept, reason="Moved to the new cluster."),
        step("forget", "reader", "forbidden", memory_id=one, reason="Trying."),
        step("restore", "owner", OK, memory_id=kept),
        step("restore", "outsider", "not_found", memory_id=kept),
        step("ingest", "owner", OK, content="user: the vault moved.", scope=team),
        step("ingest", "reader", "forbidden", content="user: a reader's chunk.", scope=team),
        step("list_conflicts", "owner", OK, scope=team),
        step("list_conflicts", "reader", "forbidden", scope=team),
        step("resolve_conflict", "owner", OK, conflict_id=pair.public_id, action="keep_both"),
        step("resolve_conflict", "owner", "not_found", conflict_id="cfl_nope", action="keep_both"),
        step("challenge", "owner", OK, memory_id=one, reason="It runs on pull requests too."),
        step("challenge", "outsider", "not_found", memory_id=one, reason="Not mine."),
        step("export_memories", "owner", OK, scopes=[team]),
        step("export_memories", "reader", "forbidden", scopes=[team]),
        step("mark_used", "owner", OK, memory_ids=[kept], conversation_id="ts-1"),
        step("mark_used", "outsider", "not_found", memory_ids=[kept]),
        step("session_receipt", "owner", OK, conversation_id="ts-1"),
        step("session_receipt", "owner", "validation_failed", conversation_id=12),
    ]
    assert {c["tool"] for c in calls if c["expect"] == OK} == TOOLS  # each tool succeeds once
    assert {c["tool"] for c in calls if c["expect"] != OK} == TOOLS  # and fails once

    seen = run_harness(server, tokens, calls)

    assert set(seen["tools"]["owner"]) == TOOLS
    problems: dict[str, list[str]] = {}
    for call, outcome in zip(calls, seen["calls"], strict=True):
        found = problem(call, outcome)
        if found is not None:
            label = "success" if call["expect"] == OK else f"error {call['expect']}"
            problems.setdefault(call["tool"], []).append(f"{label} as {call['as']}: {found}")
    assert not problems, json.dumps(problems, indent=1)
