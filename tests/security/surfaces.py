"""The tenancy table: every REST route and method, every dashboard page and every MCP tool, with
what each kind of caller must get.

The callers (columns):

- owner: admin of the team scope, full token (API, MCP) or signed in (dashboard). The control:
  the row's request is valid, so a refusal elsewhere is the access rule, not a bad request;
- outsider: a user with no membership in the team scope;
- reader: a reader of the team scope;
- read_only: the owner's read-only token;
- restricted: the owner's token restricted to the owner's personal scope;
- revoked: the owner's revoked token;
- removed: a former writer of the team scope, removed from it.

Expectations: an HTTP status, OK (2xx, or a redirect on the dashboard), LOGIN (the dashboard
sends the caller to sign in: a token is not a dashboard credential), or an MCP error code. Every
OK answer to outsider, restricted and removed must also not contain the team's ids or text.
The dashboard's rows are in `surfaces_pages.py`, the MCP tools' in `surfaces_tools.py`;
`tests/security/test_tenancy_matrix.py` fails when a route, page or tool has no row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ACTORS = ("owner", "outsider", "reader", "read_only", "restricted", "revoked", "removed")
# Callers that must never see the team scope's ids or text in a successful answer.
BLIND = ("outsider", "restricted", "removed")
OK = "ok"
LOGIN = "login"


def expect(**overrides: Any) -> dict[str, Any]:
    base = dict.fromkeys(ACTORS, OK)
    base.update(revoked=401)
    base.update(overrides)
    return base


# REST presets.
TEAM_READ = expect(outsider=404, restricted=404, removed=404)
TEAM_WRITE = expect(outsider=404, reader=403, read_only=403, restricted=404, removed=404)
TEAM_ADMIN = TEAM_WRITE
ACCOUNT_READ = expect()  # answers only the caller's own things: checked for leaks
ACCOUNT_WRITE = expect(read_only=403, restricted=403)
TOKEN_READ = expect(outsider=404, reader=404, restricted=403, removed=404)
TOKEN_WRITE = expect(outsider=404, reader=404, read_only=403, restricted=403, removed=404)
# What only a person signed in with a recent password check may do (approving and moving
# rules): every token answers 403 where it can see the object, 404 where it cannot. Rows with
# `extra={"session": True}` are sent as the owner's fresh session by the bad-input and secrets
# matrices, and each session caller's answer is `SESSION_EXPECT` (tests/security/
# test_rules_surfaces.py).
PERSON_ONLY = TEAM_WRITE | {"owner": 403}
SESSION_EXPECT = {"owner": OK, "outsider": 404, "reader": 403, "removed": 404}
PERSON_NOTE = "a token never decides: a session with a recent password check"


@dataclass(frozen=True)
class Row:
    """One request: `route` is the URL name (or tool name), the path holds {placeholders}."""

    route: str
    method: str
    path: str
    expect: dict[str, Any]
    body: dict[str, Any] | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.method} {self.route}"


def _api(route, method, path, preset, body=None, note=""):
    return Row(
        route=route, method=method, path=f"/api/v1/{path}", expect=preset, body=body, note=note
    )


MEMBER = "scopes/{team}/members/{member}"
API_ROWS = [
    _api("api-me", "get", "me", ACCOUNT_READ),
    _api(
        "api-me",
        "delete",
        "me",
        expect(**dict.fromkeys(("owner", "outsider", "reader", "read_only", "restricted"), 403))
        | {"removed": 403},
        {"password": "not-the-password"},
        note="a token never deletes an account: a session with the password "
        "(tests/memories/test_erasure.py)",
    ),
    _api("api-scopes", "get", "scopes", ACCOUNT_READ),
    _api("api-scopes", "post", "scopes", ACCOUNT_WRITE, {"name": "N", "slug": "n", "kind": "team"}),
    _api("api-scope", "get", "scopes/{team}", TEAM_READ),
    _api("api-scope", "patch", "scopes/{team}", TEAM_ADMIN, {"name": "Renamed"}),
    _api(
        "api-scope",
        "delete",
        "scopes/{team}",
        TEAM_ADMIN,
        note="the scope and every row of it go (tests/memories/test_erasure.py)",
    ),
    _api("api-scope-export", "get", "scopes/{team}/export", TEAM_ADMIN, note="a zip, streamed"),
    _api("api-export", "get", "export", ACCOUNT_READ, note="the scopes the caller administers"),
    Row(
        route="api-scope-import-export",
        method="post",
        path="/api/v1/scopes/{team}/import-export",
        expect=TEAM_WRITE,
        note="the body is a zip: an empty export",
        extra={"archive": True},
    ),
    _api(
        "api-scope-import-from",
        "post",
        "scopes/{team}/import-from/mem0",
        TEAM_WRITE,
        {"results": []},
        note="the body is the other system's file as it wrote it: mem0's get_all(), empty",
    ),
    _api("api-scope-members", "get", "scopes/{team}/members", TEAM_ADMIN),
    _api(
        "api-scope-members",
        "post",
        "scopes/{team}/members",
        TEAM_ADMIN,
        {"username": "stranger", "role": "reader"},
    ),
    _api("api-scope-member", "patch", MEMBER, TEAM_ADMIN, {"role": "reader"}),
    _api("api-scope-member", "delete", MEMBER, TEAM_ADMIN),
    _api("api-tokens", "get", "tokens", expect(restricted=403)),
    _api("api-tokens", "post", "tokens", ACCOUNT_WRITE, {"name": "ci"}),
    _api("api-token", "get", "tokens/{token}", TOKEN_READ),
    _api("api-token", "delete", "tokens/{token}", TOKEN_WRITE),
    _api("api-memories", "get", "memories?scope={team}", TEAM_READ),
    _api(
        "api-memories",
        "post",
        "memories",
        TEAM_WRITE,
        {
            "content": "Lint runs on every push.",
            "kind": "convention",
            "scope": "{team}",
            "entities": [{"name": "lint job", "kind": "service", "aliases": ["linter"]}],
        },
    ),
    _api(
        "api-memories-batch",
        "post",
        "memories/batch",
        expect(read_only=403),
        {
            "items": [
                {
                    "content": "Tests run in CI.",
                    "kind": "fact",
                    "scope": "{team}",
                    "entities": ["CI"],
                }
            ]
        },
        note="each item answers on its own: checked in the item",
    ),
    _api("api-memory", "get", "memories/{memory}", TEAM_READ),
    _api(
        "api-memory",
        "patch",
        "memories/{memory}",
        TEAM_WRITE,
        {"content": "The vault word is heliotrope-4417, rotated."},
    ),
    _api("api-history", "get", "memories/{memory}/history", TEAM_READ),
    _api("api-forget", "post", "memories/{memory}/forget", TEAM_WRITE, {"reason": "Outdated."}),
    _api(
        "api-restore",
        "post",
        "memories/{forgotten}/restore",
        TEAM_WRITE,
    ),
    _api("api-supersede", "post", "memories/{memory}/supersede", TEAM_WRITE, {"by": "{other}"}),
    _api(
        "api-challenge",
        "post",
        "memories/{memory}/challenge",
        TEAM_WRITE,
        {"reason": "The vault word was rotated."},
    ),
    _api(
        "api-memories-used",
        "post",
        "memories/used",
        expect(outsider=404, read_only=403, restricted=404, removed=404),
        {"memory_ids": ["{memory}"], "conversation_id": "conversation-1"},
        note="a reader's agent reports use; a read-only token writes nothing",
    ),
    _api("api-rules", "get", "rules?scope={team}", TEAM_READ, note="approved rules"),
    _api("api-rules", "get", "rules?scope={team}&status=candidate", TEAM_ADMIN),
    _api("api-rules", "get", "rules", ACCOUNT_READ, note="approved rules of readable scopes"),
    _api("api-rules", "get", "rules?scope={team}&status=held", TEAM_ADMIN),
    Row(
        "api-rule-approve",
        "post",
        "/api/v1/rules/{rule}/approve",
        PERSON_ONLY,
        {"text": "Say the vault word at the door.", "confirm": False},
        note=PERSON_NOTE,
        extra={"session": True},
    ),
    _api("api-rule-reject", "post", "rules/{rule}/reject", TEAM_ADMIN),
    Row(
        "api-rule-move",
        "post",
        "/api/v1/rules/{rule}/move",
        PERSON_ONLY,
        {"position": 1},
        note=PERSON_NOTE,
        extra={"session": True},
    ),
    _api("api-conflicts", "get", "conflicts?scope={team}", TEAM_ADMIN),
    _api(
        "api-conflicts", "get", "conflicts", ACCOUNT_READ, note="only scopes the caller administers"
    ),
    _api("api-conflict", "get", "conflicts/{conflict}", TEAM_ADMIN),
    _api(
        "api-conflict-resolve",
        "post",
        "conflicts/{conflict}/resolve",
        TEAM_ADMIN,
        {"action": "keep_both"},
    ),
    _api("api-recall", "post", "recall", TEAM_READ, {"query": "vault word", "scopes": ["{team}"]}),
    _api(
        "api-recall",
        "post",
        "recall",
        ACCOUNT_READ,
        {"query": "heliotrope vault word"},
        note="all readable scopes",
    ),
    _api(
        "api-recall",
        "post",
        "recall",
        TEAM_READ,
        {"query": "vault word", "scopes": ["{team}"], "as_of": "{as_of}"},
        note="as_of: what was valid then, in the scopes readable now",
    ),
    _api(
        "api-recall",
        "post",
        "recall",
        ACCOUNT_READ,
        {"query": "heliotrope vault word", "as_of": "{as_of}"},
        note="as_of over all readable scopes",
    ),
    _api(
        "api-recall",
        "post",
        "recall",
        TEAM_READ,
        {"query": "vault word", "scopes": ["{team}"], "nearest": True},
        note="nearest: the nearest anyway, in the scopes readable now",
    ),
    _api(
        "api-context", "post", "context", TEAM_READ, {"topic": "vault word", "scopes": ["{team}"]}
    ),
    _api(
        "api-context",
        "post",
        "context",
        TEAM_READ,
        {"topic": "vault word", "scopes": ["{team}"], "as_of": "{as_of}"},
    ),
    _api("api-briefing", "get", "briefing?scopes={team}", TEAM_READ),
    _api("api-briefing", "get", "briefing?scopes={team}&as_of={as_of}", TEAM_READ),
    _api("api-briefing", "get", "briefing?as_of={as_of}", ACCOUNT_READ, note="as_of, all scopes"),
    _api("api-briefing", "get", "briefing", ACCOUNT_READ, note="all readable scopes"),
    _api("api-activity", "get", "activity", ACCOUNT_READ),
    _api("api-insights", "get", "insights?scope={team}&days=7", TEAM_READ),
    _api(
        "api-insights-session",
        "get",
        "insights/session?conversation_id=conv-1",
        ACCOUNT_READ,
        note="the caller's own sessions",
    ),
    _api(
        "api-ingest",
        "post",
        "ingest",
        TEAM_WRITE,
        {"content": "user: the vault moved again.", "source_kind": "transcript", "scope": "{team}"},
    ),
    _api(
        "api-chunk",
        "get",
        "ingest/{chunk}",
        expect(outsider=404, reader=404, restricted=404, removed=404),
        note="a chunk is its user's own, in a scope they can still read",
    ),
    _api(
        "api-import",
        "post",
        "import",
        expect(read_only=403),
        {
            "source_tool": "claude-md",
            "source_path": "CLAUDE.md",
            "content": "## Vault\n\nThe vault moved to the third floor.",
            "scope": "{team}",
        },
        note="each piece answers on its own: checked in the piece",
    ),
    # A scope's tools' routes (memories.mcp.scope_tools).
    _api("api-scope-overview", "get", "scopes/{team}/overview", TEAM_READ),
    _api(
        "api-conflicts-resolve",
        "post",
        "conflicts/resolve",
        TEAM_ADMIN,
        {"items": [{"conflict_id": "{conflict}", "action": "keep_both"}]},
    ),
    _api("api-scope-hygiene-scan", "post", "scopes/{team}/hygiene-scan", TEAM_ADMIN),
    _api(
        "api-scope-hygiene-scan",
        "post",
        "scopes/{team}/hygiene-scan",
        TEAM_ADMIN,
        {"cursor": "{memory}"},
        note="the next share, after the cursor's memory",
    ),
]

API_ROWS += [  # move, share, promote and benchmark (issue 38)
    _api(
        "api-memories-move",
        "post",
        "memories/move",
        TEAM_WRITE,
        {"memory_ids": ["{other}"], "to_scope": "{personal}", "confirm": True},
    ),
    _api(
        "api-share",
        "post",
        "memories/{memory}/share",
        expect(outsider=404, reader=404, read_only=403, restricted=404, removed=404),
        {"to_scope": "{personal}"},
        note="a reader may copy what it reads, but only into a scope it writes",
    ),
    _api(
        "api-promote",
        "post",
        "memories/{memory}/promote",
        TEAM_WRITE,
        note="the world's memory is an approved rule already: 409 for the owner",
    ),
    # Entities (issue 40): search, describe, names for writers, merges and splits for admins.
    _api("api-entities", "get", "entities?scope={team}", TEAM_READ),
    _api(
        "api-entities",
        "get",
        "entities?q=vault",
        ACCOUNT_READ,
        note="only entities of readable scopes are found",
    ),
    _api("api-entity", "get", "entities/{entity}", TEAM_READ),
    _api(
        "api-entity",
        "get",
        "entities/{entity}?limit=1",
        TEAM_READ,
        note="memories paged; neighbours of readable scopes only",
    ),
    _api("api-entity-aliases", "post", "entities/{entity}/aliases", TEAM_WRITE, {"alias": "crypt"}),
    _api(
        "api-entity-merge",
        "post",
        "entities/{neighbour}/merge",
        TEAM_ADMIN,
        {"into": "{entity}"},
        note="add-only: a row says who merged what, until it is undone",
    ),
    _api("api-entity-merge-undo", "post", "entities/{merged}/merge/undo", TEAM_ADMIN),
    _api(
        "api-entity-split",
        "post",
        "entities/{entity}/split",
        TEAM_ADMIN,
        {"aliases": ["vault squad heliotrope-4417"], "name": "vault squad heliotrope-4417"},
    ),
    _api("api-entity-split-undo", "post", "entities/{split}/split/undo", TEAM_ADMIN),
    # Typed links between memories (issue 40).
    _api("api-links", "get", "memories/{memory}/links", TEAM_READ),
    _api(
        "api-links",
        "post",
        "memories/{memory}/links",
        TEAM_WRITE,
        {"to": "{other}", "type": "relates_to"},
    ),
    _api(
        "api-link",
        "delete",
        "memories/{memory}/links/{link}",
        TEAM_WRITE,
        note="add-only: the link keeps its row, removed",
    ),
    _api(
        "api-benchmark",
        "post",
        "scopes/{team}/benchmark",
        TEAM_READ,
        {"cases": [{"question": "vault word", "expected_ids": ["{other}"]}]},
    ),
]

# The batch answers 200 with one status per item; these are the item's statuses.
BATCH_ITEM = expect(outsider=404, reader=403, read_only=403, restricted=404, removed=404)
# An import answers 200 with one outcome per piece; these are the first piece's.
IMPORT_ITEM = expect(
    outsider="not_found", reader="forbidden", restricted="not_found", removed="not_found"
)


# Routes outside the tenancy table, with the reason.
EXEMPT = {
    "healthz": "public liveness probe; answers no tenant data",
    "readyz": "public readiness probe; answers no tenant data",
    "metrics": "Prometheus scrape, off unless ZM_METRICS, bearer token of its own; counts only",
    "schema": "public OpenAPI document; answers no tenant data",
    "api-docs": "public API documentation page",
    "admin:*": "Django admin: staff only, with Django's own permission checks (tested apart)",
    "oauth2_provider:oauth-server-metadata": "public OAuth metadata (RFC 8414); no tenant data",
    "oauth2_provider:oauth-resource-metadata*": "public resource metadata (RFC 9728)",
    "oauth2_provider:authorize": (
        "consent: the signed-in person's own scopes only; grants run through the tenancy "
        "rows as tokens (tests/oauth/test_grant_matrix.py), bad input in tests/oauth"
    ),
    "api-export-download": (
        "the signed, single-use URL the MCP tool export_memories answers is the credential; "
        "its user and scopes are checked again when it is used (tests/memories/test_portability.py)"
    ),
    "oauth2_provider:token": "OAuth token endpoint: codes and refresh tokens (tests/oauth)",
    "oauth2_provider:revoke-token": "OAuth revocation (RFC 7009) of the caller's own tokens",
    "oauth2_provider:dcr-register*": "client registration (RFC 7591/7592); no tenant data",
}
