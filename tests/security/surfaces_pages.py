"""The dashboard's rows of the tenancy table (see `tests.security.surfaces`): sessions only; a
bearer token without a session is sent to sign in."""

from __future__ import annotations

from tests.security.surfaces import ACTORS, LOGIN, OK, Row, expect

_NO_TOKENS = {"read_only": LOGIN, "restricted": LOGIN, "revoked": LOGIN}
PAGE_ACCOUNT = expect(**_NO_TOKENS)
PAGE_TEAM_READ = expect(outsider=404, removed=404, **_NO_TOKENS)
PAGE_TEAM_WRITE = expect(outsider=404, reader=403, removed=404, **_NO_TOKENS)
PAGE_PUBLIC = dict.fromkeys(ACTORS, OK)


def _page(route, method, path, preset, body=None, note=""):
    return Row(
        route=f"dashboard:{route}", method=method, path=path, expect=preset, body=body, note=note
    )


PAGE_MEMBER = "/scopes/{team}/members/{member}"
DASHBOARD_ROWS = [
    _page("home", "get", "/", PAGE_ACCOUNT),
    _page("home", "get", "/?q=vault+word", PAGE_ACCOUNT, note="search across readable scopes"),
    _page(
        "home",
        "get",
        "/?q=vault+word&as_of=2026-01-01T00%3A00",
        PAGE_ACCOUNT,
        note="search as of an instant, across readable scopes",
    ),
    _page(
        "home",
        "get",
        "/?scope={team}",
        expect(outsider=404, removed=404, **_NO_TOKENS),
        note="a scope the caller cannot read answers 404 like a missing one",
    ),
    _page("remember", "get", "/remember/", PAGE_ACCOUNT),
    _page(
        "remember",
        "post",
        "/remember/",
        expect(outsider=422, reader=422, removed=422, **_NO_TOKENS),
        {"content": "Lint on push.", "kind": "convention", "scope": "{team}"},
        note="only writable scopes are choices",
    ),
    _page("memory", "get", "/memories/{memory}/", PAGE_TEAM_READ),
    _page(
        "memory_edit",
        "post",
        "/memories/{memory}/edit/",
        PAGE_TEAM_WRITE,
        {"content": "The vault word is heliotrope-4417, rotated.", "kind": "fact"},
    ),
    _page(
        "memory_forget",
        "post",
        "/memories/{memory}/forget/",
        PAGE_TEAM_WRITE,
        {"reason": "Outdated."},
    ),
    _page("memory_restore", "post", "/memories/{forgotten}/restore/", PAGE_TEAM_WRITE),
    _page(
        "memory_link",
        "post",
        "/memories/{memory}/links/",
        PAGE_TEAM_WRITE,
        {"type": "example_of", "to": "{other}"},
    ),
    _page(
        "memory_unlink",
        "post",
        "/memories/{memory}/links/{link}/remove/",
        PAGE_TEAM_WRITE,
        note="add-only: the link keeps its row, removed",
    ),
    _page("entities", "get", "/entities/", PAGE_ACCOUNT, note="entities of readable scopes"),
    _page("entities", "get", "/entities/?q=vault", PAGE_ACCOUNT),
    _page(
        "entities",
        "get",
        "/entities/?scope={team}",
        expect(outsider=404, removed=404, **_NO_TOKENS),
        note="a scope the caller cannot read answers 404 like a missing one",
    ),
    _page(
        "entity",
        "get",
        "/entities/{entity}/",
        PAGE_TEAM_READ,
        note="its memories, names, neighbourhood picture and timeline",
    ),
    _page(
        "entity_alias", "post", "/entities/{entity}/aliases/", PAGE_TEAM_WRITE, {"alias": "crypt"}
    ),
    _page(
        "entity_merge",
        "post",
        "/entities/{neighbour}/merge/",
        PAGE_TEAM_WRITE,
        {"into": "{entity}"},
        note="admins",
    ),
    _page("entity_merge_undo", "post", "/entities/{merged}/merge/undo/", PAGE_TEAM_WRITE),
    _page(
        "entity_split",
        "post",
        "/entities/{entity}/split/",
        PAGE_TEAM_WRITE,
        {"aliases": "vault squad heliotrope-4417", "name": "vault squad heliotrope-4417"},
        note="admins",
    ),
    _page("entity_split_undo", "post", "/entities/{split}/split/undo/", PAGE_TEAM_WRITE),
    _page(
        "entity_changes",
        "get",
        "/scopes/{team}/entities/changes/",
        PAGE_TEAM_WRITE,
        note="a scope's merges and splits, for its admins",
    ),
    _page("scopes", "get", "/scopes/", PAGE_ACCOUNT),
    _page("scopes", "post", "/scopes/", PAGE_ACCOUNT, {"name": "N", "slug": "n", "kind": "team"}),
    _page("scope", "get", "/scopes/{team}/", PAGE_TEAM_READ),
    _page(
        "scope_rename",
        "post",
        "/scopes/{team}/rename/",
        PAGE_TEAM_WRITE,
        {"name": "Renamed", "slug": "renamed"},
    ),
    _page(
        "scope_delete",
        "post",
        "/scopes/{team}/delete/",
        PAGE_TEAM_WRITE,
        note="holds memories: the owner is told so",
    ),
    _page(
        "scope_leave",
        "post",
        "/scopes/{team}/leave/",
        expect(outsider=404, removed=404, **_NO_TOKENS),
        note="any member may leave; the last admin is told no",
    ),
    _page(
        "member_add",
        "post",
        "/scopes/{team}/members/",
        PAGE_TEAM_WRITE,
        {"username": "stranger", "role": "10"},
    ),
    _page("member_role", "post", PAGE_MEMBER + "/role/", PAGE_TEAM_WRITE, {"role": "10"}),
    _page("member_remove", "post", PAGE_MEMBER + "/remove/", PAGE_TEAM_WRITE),
    _page(
        "export_start",
        "post",
        "/scopes/{team}/exports/",
        PAGE_TEAM_WRITE,
        note="admins: a job the worker runs (tests/dashboard/test_export_pages.py)",
    ),
    _page("export", "get", "/scopes/{team}/exports/{export}/", PAGE_TEAM_WRITE),
    _page("import_from", "get", "/scopes/{team}/import-from/", PAGE_TEAM_WRITE),
    Row(
        route="dashboard:import_from",
        method="post",
        path="/scopes/{team}/import-from/",
        expect=PAGE_TEAM_WRITE,
        body={"system": "mem0", "dry_run": "on"},
        note="the file is an upload: an empty mem0 get_all()",
        extra={"upload": b'{"results": []}'},
    ),
    _page(
        "export_download",
        "get",
        "/scopes/{team}/exports/{export}/download/",
        PAGE_TEAM_WRITE,
        note="the owner's own job, once; the access module is asked again",
    ),
    _page("activity", "get", "/activity/", PAGE_ACCOUNT),
    _page("insights_list", "get", "/insights/", PAGE_ACCOUNT, note="only readable scopes"),
    _page("insights", "get", "/insights/{team}/?days=7", PAGE_TEAM_READ),
    _page("ingest", "get", "/ingest/", PAGE_ACCOUNT),
    _page(
        "ingest_retry",
        "post",
        "/ingest/{chunk}/retry/",
        expect(outsider=404, reader=404, removed=404, **_NO_TOKENS),
        note="a chunk is its user's own",
    ),
    _page("review", "get", "/review/", PAGE_ACCOUNT, note="only scopes the caller administers"),
    _page("review", "get", "/review/?scope={team}", PAGE_TEAM_WRITE),
    _page(
        "review_resolve",
        "post",
        "/review/{conflict}/resolve/",
        PAGE_TEAM_WRITE,
        {"action": "keep_both"},
    ),
    _page("rules", "get", "/rules/", PAGE_ACCOUNT, note="candidates of administered scopes"),
    _page("rules", "get", "/rules/?scope={team}&status=approved", PAGE_TEAM_READ),
    _page("rules", "get", "/rules/?scope={team}", PAGE_TEAM_WRITE, note="candidates: admins"),
    _page("rules", "get", "/rules/?scope={team}&status=held", PAGE_TEAM_WRITE),
    _page(
        "rule_approve",
        "post",
        "/rules/{rule}/approve/",
        PAGE_TEAM_WRITE,
        {"text": "Say the vault word at the door.", "status": "approved", "confirm": "1"},
    ),
    _page("rule_reject", "post", "/rules/{rule}/reject/", PAGE_TEAM_WRITE, {"status": "approved"}),
    _page("rule_move", "post", "/rules/{rule}/move/", PAGE_TEAM_WRITE, {"position": "1"}),
    _page("tokens", "get", "/tokens/", PAGE_ACCOUNT),
    _page("tokens", "post", "/tokens/", PAGE_ACCOUNT, {"name": "ci"}),
    _page(
        "token_revoke",
        "post",
        "/tokens/{token}/revoke/",
        expect(outsider=404, reader=404, removed=404, **_NO_TOKENS),
    ),
    _page("account", "get", "/account/", PAGE_ACCOUNT),
    _page(
        "account_delete",
        "post",
        "/account/delete/",
        expect(owner=409, **_NO_TOKENS),
        {"password": "correct horse battery", "confirm": "on"},
        note="the caller's own account only; the owner is the team's sole admin: 409",
    ),
    _page("password_change", "get", "/password/", PAGE_ACCOUNT),
    _page("password_change_done", "get", "/password/done/", PAGE_ACCOUNT),
    _page("password_confirm", "get", "/password/confirm/?next=/rules/", PAGE_ACCOUNT),
    _page(
        "password_confirm",
        "post",
        "/password/confirm/",
        PAGE_ACCOUNT,
        {"password": "correct horse battery", "next": "/rules/"},
        note="the caller's own password; a recent check lets a person decide on rules",
    ),
    _page("login", "get", "/login/", PAGE_PUBLIC),
    _page("logout", "post", "/logout/", PAGE_PUBLIC),
    _page("signup", "get", "/signup/", PAGE_PUBLIC),
    _page("set_language", "post", "/language/", PAGE_PUBLIC, {"language": "de"}),
]
