"""The tenancy matrix: every route, page and tool against every kind of caller.

The table is `tests.security.surfaces`; the completeness tests below fail when a URL pattern
(from the resolver), a dashboard page or an MCP tool (from the server) has no row there.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver, resolve

from tests.mcp_inproc import call_tool, structured, tool_names
from tests.security.surfaces import (
    ACTORS,
    API_ROWS,
    BATCH_ITEM,
    BLIND,
    EXEMPT,
    IMPORT_ITEM,
    LOGIN,
    OK,
    Row,
)
from tests.security.surfaces_pages import DASHBOARD_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.world import answer_text, empty_export, world_fixtures

METHODS = ("get", "post", "put", "patch", "delete")


def url_patterns(patterns=None, namespace: str = ""):
    """(name, view methods or None) of every URL pattern the project serves."""
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from url_patterns(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern):
            view = getattr(pattern.callback, "cls", None) or getattr(
                pattern.callback, "view_class", None
            )
            methods = [m for m in METHODS if view is not None and hasattr(view, m)]
            yield f"{namespace}{pattern.name}", methods


def exempt(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in EXEMPT)


# -- completeness --------------------------------------------------------------------------------


def test_every_api_route_and_method_has_a_row():
    rows = {(row.route, row.method) for row in API_ROWS}
    missing = [
        (name, method)
        for name, methods in url_patterns()
        if name.startswith("api-") and not exempt(name)
        for method in methods
        if (name, method) not in rows
    ]
    assert not missing, (
        f"REST routes without a tenancy row in tests/security/surfaces.py: {missing}"
    )


def test_every_dashboard_page_has_a_row():
    pages = {row.route for row in DASHBOARD_ROWS}
    missing = [
        name
        for name, _ in url_patterns()
        if name.startswith("dashboard:") and not exempt(name) and name not in pages
    ]
    assert not missing, f"dashboard pages without a tenancy row: {missing}"


def test_every_route_is_in_the_table_or_exempt():
    known = {row.route for row in API_ROWS + DASHBOARD_ROWS}
    stray = [name for name, _ in url_patterns() if name not in known and not exempt(name)]
    assert not stray, f"URL patterns neither in the tenancy table nor exempt: {stray}"


def test_every_mcp_tool_has_a_row():
    missing = sorted(set(tool_names()) - {row.route for row in TOOL_ROWS})
    assert not missing, f"MCP tools without a tenancy row: {missing}"


@pytest.mark.parametrize("row", API_ROWS + DASHBOARD_ROWS, ids=lambda row: row.id)
def test_each_row_names_its_route(row: Row):
    path = row.path.split("?")[0].format(
        team="scp_x",
        memory="mem_x",
        forgotten="mem_y",
        token="tok_x",
        member="member",
        chunk="chk_x",
        conflict="cfl_x",
        rule="rul_x",
        export="exj_x",
        link="lnk_x",
        entity="ent_x",
        neighbour="ent_y",
        merged="ent_z",
        split="ent_w",
    )
    match = resolve(path)
    assert (f"{match.namespace}:" if match.namespace else "") + match.url_name == row.route


def test_every_row_covers_every_caller():
    for row in API_ROWS + DASHBOARD_ROWS + TOOL_ROWS:
        assert set(row.expect) == set(ACTORS), row.id


# -- the matrix ----------------------------------------------------------------------------------


def cases(rows: list[Row]) -> list[Any]:
    return [pytest.param(row, actor, id=f"{row.id}-{actor}") for row in rows for actor in ACTORS]


shared_world, world = world_fixtures(export=True)


def check_blind(world, actor: str, text: str, row: Row) -> None:
    """A caller outside the team sees none of its ids or words, except the ids it sent itself."""
    if actor in BLIND:
        sent = world.fill(row.path) + json.dumps(world.fill(row.body))
        assert not world.leaks(text, sent), f"{actor} saw {world.leaks(text, sent)}"


@pytest.mark.parametrize(("row", "actor"), cases(API_ROWS))
def test_rest(world, row: Row, actor: str):
    client = world.api(actor)
    path = world.fill(row.path)
    call = getattr(client, row.method)
    if row.extra.get("archive"):
        response = call(path, empty_export(), content_type="application/zip")
    elif row.body:
        response = call(path, world.fill(row.body), format="json")
    else:
        response = call(path)
    wanted = row.expect[actor]
    if wanted == OK:
        assert response.status_code < 300 or (actor == "owner" and response.status_code == 409), (
            response
        )
        check_blind(world, actor, answer_text(response), row)
        if row.route == "api-memories-batch":
            item = response.json()["results"][0]
            item_wanted = BATCH_ITEM[actor]
            assert (item["status"] < 300) if item_wanted == OK else item["status"] == item_wanted
        if row.route == "api-import":
            outcome = response.json()["results"][0]["outcome"]
            wanted_outcome = IMPORT_ITEM[actor]
            assert outcome == "created" if wanted_outcome == OK else outcome == wanted_outcome
    else:
        assert response.status_code == wanted, response.content
        assert response.json()["error"]["code"]
        check_blind(world, actor, response.content.decode(), row)


@pytest.mark.parametrize(("row", "actor"), cases(DASHBOARD_ROWS))
def test_dashboard(world, row: Row, actor: str):
    client = world.browser(actor)
    path = world.fill(row.path)
    call = getattr(client, row.method)
    body = world.fill(row.body) or {}
    if row.extra.get("upload"):
        body["file"] = SimpleUploadedFile("upload.json", row.extra["upload"])
    response = call(path, body)
    wanted = row.expect[actor]
    if wanted == LOGIN:
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    elif wanted == OK:
        assert response.status_code < 400, response.status_code
        check_blind(world, actor, answer_text(response), row)  # a download: the zip's text
    else:
        assert response.status_code == wanted
        check_blind(world, actor, response.content.decode(), row)


@pytest.mark.parametrize(("row", "actor"), cases(TOOL_ROWS))
def test_mcp(world, row: Row, actor: str):
    result = call_tool(world.secrets[actor], row.route, world.fill(row.body))
    answer = structured(result)
    wanted = row.expect[actor]
    if wanted == OK:
        assert not result.is_error, answer
    else:
        assert result.is_error and answer["error"]["code"] == wanted, answer
    check_blind(world, actor, json.dumps(answer), row)
