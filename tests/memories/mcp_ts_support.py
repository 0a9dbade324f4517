"""The official TypeScript MCP SDK (`@modelcontextprotocol/sdk`, what Claude Code, Cursor and
VS Code build on) in the suite: `tests/mcp_ts/harness.mjs`, run with node against a live server,
lists the tools and runs a plan of calls, each expecting an answer or a tool error with its code.

That SDK checks any structured content of a result against the tool's output schema and throws
instead of returning the result when it does not match, so a tool error reaches its agent only
as `isError` with the error envelope in the text. `make test` installs the harness's pinned
packages (`npm ci`); a machine without node or them fails, saying what to run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

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


def typescript_sdk_failures(
    url: str, tokens: dict[str, str], calls: list[dict[str, Any]]
) -> dict[str, Any]:
    """Run the plan through the TypeScript SDK: the tools each token lists, and what went wrong,
    by tool ({} when every call came back as its step expects)."""
    seen = run_harness(url, tokens, calls)
    problems: dict[str, list[str]] = {}
    for call, outcome in zip(calls, seen["calls"], strict=True):
        found = problem(call, outcome)
        if found is not None:
            label = "success" if call["expect"] == OK else f"error {call['expect']}"
            problems.setdefault(call["tool"], []).append(f"{label} as {call['as']}: {found}")
    return {"tools": seen["tools"], "problems": problems}
