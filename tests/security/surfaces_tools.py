"""The MCP tools' rows of the tenancy table (see `tests.security.surfaces`); expectations are
tool error codes."""

from __future__ import annotations

from tests.security.surfaces import Row, expect

TOOL_READ = expect(outsider="not_found", restricted="not_found", removed="not_found")
TOOL_READ.update(revoked="unauthorized")
TOOL_WRITE = dict(TOOL_READ, reader="forbidden", read_only="forbidden")
TOOL_ACCOUNT = expect(revoked="unauthorized")
TOOL_ADMIN = TOOL_WRITE


def _tool(name, preset, arguments, note=""):
    return Row(route=name, method="call", path=name, expect=preset, body=arguments, note=note)


TOOL_ROWS = [
    _tool(
        "remember",
        TOOL_WRITE,
        {
            "content": "Lint runs on every push.",
            "kind": "convention",
            "scope": "{team}",
            "entities": [{"name": "lint job", "kind": "service"}, "linter"],
        },
    ),
    _tool("recall", TOOL_READ, {"query": "vault word", "scopes": ["{team}"]}),
    _tool("build_context", TOOL_READ, {"topic": "vault word", "scopes": ["{team}"]}),
    _tool("briefing", TOOL_READ, {"scopes": ["{team}"]}),
    _tool("recall", TOOL_READ, {"query": "vault word", "scopes": ["{team}"], "as_of": "{as_of}"}),
    _tool("recall", TOOL_READ, {"query": "vault word", "scopes": ["{team}"], "nearest": True}),
    _tool("build_context", TOOL_READ, {"topic": "vault", "scopes": ["{team}"], "as_of": "{as_of}"}),
    _tool("briefing", TOOL_READ, {"scopes": ["{team}"], "as_of": "{as_of}"}),
    _tool("history", TOOL_READ, {"memory_id": "{memory}"}),
    _tool("forget", TOOL_WRITE, {"memory_id": "{memory}", "reason": "Outdated."}),
    _tool("restore", TOOL_WRITE, {"memory_id": "{forgotten}"}),
    _tool("list_scopes", TOOL_ACCOUNT, {}),
    _tool(
        "ingest",
        TOOL_WRITE,
        {"content": "user: the vault moved again.", "source_kind": "transcript", "scope": "{team}"},
    ),
    _tool("list_conflicts", TOOL_ADMIN, {"scope": "{team}"}),
    _tool("list_conflicts", TOOL_ACCOUNT, {}, note="only scopes the caller administers"),
    _tool("resolve_conflict", TOOL_ADMIN, {"conflict_id": "{conflict}", "action": "keep_both"}),
    _tool("challenge", TOOL_WRITE, {"memory_id": "{memory}", "reason": "It was rotated."}),
    _tool("export_memories", TOOL_ADMIN, {"scopes": ["{team}"]}),
    _tool("export_memories", TOOL_ACCOUNT, {}, note="the scopes the caller administers"),
    _tool(
        "mark_used",
        dict(TOOL_READ, read_only="forbidden"),
        {"memory_ids": ["{memory}"], "conversation_id": "conversation-1"},
    ),
    _tool("session_receipt", TOOL_ACCOUNT, {"conversation_id": "conv-1"}, note="own sessions only"),
    # move_memories, share, promote_rule, reject_rule, import_memory, benchmark_memory
    _tool(
        "move_memories",
        TOOL_WRITE,
        {"memory_ids": ["{other}"], "to_scope": "{personal}", "confirm": True},
    ),
    _tool(
        "share",
        dict(TOOL_READ, reader="not_found", read_only="forbidden"),
        {"memory_id": "{other}", "to_scope": "{personal}"},
        note="a reader may copy what it reads, but only into a scope it writes",
    ),
    _tool("promote_rule", TOOL_WRITE, {"memory_id": "{other}"}),
    _tool("reject_rule", TOOL_ADMIN, {"rule_id": "{rule}"}),
    _tool(
        "import_memory",
        TOOL_WRITE,
        {"scope": "{team}", "markdown": "## Vault\n\nThe vault moved to the third floor."},
    ),
    _tool(
        "benchmark_memory",
        TOOL_READ,
        {"scope": "{team}", "cases": [{"question": "vault word", "expected_ids": ["{other}"]}]},
    ),
    # A scope's tools (memories.mcp.scope_tools).
    _tool("describe_scope", TOOL_READ, {"scope": "{team}"}, note="members only for its admins"),
    _tool("get_conflict", TOOL_ADMIN, {"conflict_id": "{conflict}"}),
    _tool(
        "resolve_conflicts",
        TOOL_ADMIN,
        {"items": [{"conflict_id": "{conflict}", "action": "keep_both"}]},
    ),
    _tool(
        "resolve_conflicts",
        TOOL_ADMIN,
        {"items": [{"conflict_id": "{conflict}", "action": "dismiss"}], "dry_run": True},
        note="dry run",
    ),
    _tool("scan_hygiene", TOOL_ADMIN, {"scope": "{team}"}),
    _tool("scan_hygiene", TOOL_ADMIN, {"scope": "{team}", "cursor": "{memory}"}, note="next share"),
    _tool("export_metrics", TOOL_READ, {"scope": "{team}", "days": 7}),
    # Typed links (memories.mcp.link_tools).
    _tool("link", TOOL_WRITE, {"memory_id": "{memory}", "to": "{other}", "type": "example_of"}),
    _tool(
        "link",
        TOOL_WRITE,
        {"memory_id": "{memory}", "to": "{other}", "type": "depends_on", "remove": True},
        note="takes the world's link back",
    ),
    # What memories are about (memories.mcp.entity_tools).
    _tool("entities", TOOL_READ, {"scope": "{team}", "query": "vault"}),
    _tool("entities", TOOL_READ, {"entity_id": "{entity}", "limit": 1}),
    _tool(
        "entities",
        TOOL_ACCOUNT,
        {"query": "vault"},
        note="across readable scopes: the team's entities are found by its members only",
    ),
]
