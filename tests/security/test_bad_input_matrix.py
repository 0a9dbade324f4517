"""The bad-input matrix: one table of malformed values against every write endpoint and tool.

The endpoints come from the tenancy table (which the tenancy matrix keeps complete against the
URL resolver and the MCP server), each with the owner's valid request as the base. Every field
of the base is replaced by every bad value, and every body by every bad body; no answer may be a
5xx, and every refusal (400, 404, 409, 415, 422) must name the field, or `body` for the body as a
whole. Each case runs in a savepoint that is rolled back, so one world serves a whole endpoint.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from tests.mcp_inproc import call_tool, structured
from tests.security.surfaces import API_ROWS, OK, Row
from tests.security.surfaces_pages import DASHBOARD_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.world import world_fixtures

DEEP = json.loads("[" * 40 + "]" * 40)
BAD_VALUES: dict[str, Any] = {
    "integer": 123,
    "float": 1.5,
    "boolean": True,
    "null": None,
    "list": ["x"],
    "object": {"a": 1},
    "empty": "",
    "blank": "   ",
    "nul": "a\x00b",
    "surrogate": "\ud800",
    "huge string": "x" * 300_000,
    "huge number": 10**400,
    "tsquery": "a & b | !c <-> (d:*) '",
    "sql": "'; DROP TABLE memories_memory; --",
    "like": "%_\\",
    "deep": DEEP,
}
BAD_BODIES: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "application/json"),
    "malformed": (b'{"a": ', "application/json"),
    "not an object": (b"[1, 2]", "application/json"),
    "invalid utf-8": (b'{"a": "\xff\xfe"}', "application/json"),
    "nan": (b'{"a": NaN}', "application/json"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    "wrong content type": (b"a=1", "text/plain"),
    "form": (b"a=1", "application/x-www-form-urlencoded"),
}
REFUSALS = (400, 404, 409, 415, 422)
WRITES = [row for row in API_ROWS if row.method != "get"]
READS = [row for row in API_ROWS if row.method == "get"]
PATH_VALUES = ("%00", "a" * 41, "%ff", "mem_%00x")


class Rollback(Exception):
    pass


@contextmanager
def rolled_back():
    try:
        with transaction.atomic():
            yield
            raise Rollback
    except Rollback:
        pass


shared_world, world = world_fixtures(export=True)


def named(details: Any) -> set[str]:
    """The fields an error names; `scopes.0` names `scopes` too."""
    if not isinstance(details, dict):
        return set()
    return {key for field in details for key in (field, field.split(".")[0])}


def send(world, row: Row, body: Any = None, raw: tuple[bytes, str] | None = None, path=None):
    client = world.api("owner")
    if row.extra.get("session"):  # only a person decides on rules: the owner, just signed in
        client = APIClient()
        client.force_login(world.users["owner"])
    path = path or world.fill(row.path)
    if raw is None and body is None:
        return getattr(client, row.method)(path)
    if raw is None:  # as a client would send it: ASCII JSON, lone surrogates escaped
        raw = (json.dumps(body).encode("ascii"), "application/json")
    return client.generic(row.method.upper(), path, raw[0], content_type=raw[1])


def check(response, field: str | None) -> str | None:
    """A complaint about this answer, or None when it is acceptable. `field=None`: the body as a
    whole was bad, so the refusal may name the body or any field it lacks."""
    if response.status_code >= 500:
        return f"{response.status_code}: {response.content[:300]!r}"
    if response.status_code in REFUSALS:
        error = response.json()["error"]
        if error["code"] == "internal" or not error["message"]:
            return f"bad error {error}"
        fields = named(error["details"])
        if field is None:
            if not fields and response.status_code != 409:
                return f"{response.status_code} names nothing: {error}"
        elif field not in fields and "body" not in fields:
            return f"{response.status_code} does not name {field}: {error}"
    return None


def field_cases(row: Row) -> list[tuple[str, str, Any]]:
    """(field, value name, body) for every field of the row's body and every bad value."""
    base = row.body or {}
    if row.route == "api-memories-batch":
        item = base["items"][0]
        return [
            (f"items.{field}", name, {"items": [dict(item, **{field: value})]})
            for field in item
            for name, value in BAD_VALUES.items()
        ]
    fields = list(base)
    return [
        (field, name, dict(base, **{field: value}))
        for field in fields
        for name, value in BAD_VALUES.items()
    ] + [("colour", "unknown field", dict(base, colour="red"))]


# Writes without a body (DELETE, restore) are covered by the bad-body cases alone.
@pytest.mark.parametrize("row", [r for r in WRITES if r.body], ids=lambda row: row.id)
def test_rest_writes_refuse_bad_values_naming_the_field(world, row: Row):
    problems = []
    for field, name, template in field_cases(row):
        body = world.fill(template)
        with rolled_back():
            response = send(world, row, body)
        if row.route == "api-memories-batch" and response.status_code == 200:
            item = response.json()["results"][0]
            if item["status"] >= 500 or (
                item["status"] in REFUSALS
                and field.split(".")[1] not in named(item["error"]["details"])
            ):
                problems.append((field, name, item))
            continue
        if (problem := check(response, field.split(".")[0])) is not None:
            problems.append((field, name, problem))
    assert not problems, problems


@pytest.mark.parametrize("row", WRITES, ids=lambda row: row.id)
def test_rest_writes_refuse_bad_bodies_naming_the_body(world, row: Row):
    problems = []
    for name, raw in BAD_BODIES.items():
        with rolled_back():
            response = send(world, row, raw=raw)
        if (problem := check(response, None)) is not None:
            problems.append((name, problem))
    assert not problems, problems


def _with_bad_ids(row: Row) -> list[str]:
    """The row's path with each id in it (not in its query) replaced by each bad value."""
    path, mark, query = row.path.partition("?")
    paths = []
    for placeholder in (
        "{team}",
        "{memory}",
        "{forgotten}",
        "{token}",
        "{member}",
        "{chunk}",
        "{conflict}",
        "{rule}",
        "{export}",
        "{link}",
        "{entity}",
        "{neighbour}",
        "{merged}",
        "{split}",
    ):
        if placeholder in path:
            paths += [path.replace(placeholder, value) + mark + query for value in PATH_VALUES]
    return paths


@pytest.mark.parametrize("row", [r for r in API_ROWS if _with_bad_ids(r)], ids=lambda r: r.id)
def test_rest_bad_ids_in_the_path_answer_404(world, row: Row):
    for template in _with_bad_ids(row):
        path = world.fill(template)
        with rolled_back():
            response = send(world, row, world.fill(row.body), path=path)
        assert response.status_code == 404, (path, response.content[:300])
        assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("row", READS, ids=lambda row: row.id)
@pytest.mark.parametrize(
    "value", ["%00", "%ff", "a" * 5000, "'%3B--", "-1", "99999999999999999999"]
)
def test_rest_reads_refuse_bad_query_values_naming_the_parameter(world, row: Row, value: str):
    base, _, query = world.fill(row.path).partition("?")
    names = [pair.split("=")[0] for pair in query.split("&") if pair] or ["cursor"]
    names += ["limit", "colour"]
    for name in names:
        path = f"{base}?{name}={value}"
        response = send(world, Row(row.route, "get", path, row.expect), path=path)
        assert response.status_code < 500, (path, response.content[:300])
        if response.status_code in REFUSALS:
            details = named(response.json()["error"]["details"])
            assert name in details or "body" in details, (path, response.json())


@pytest.mark.parametrize("row", TOOL_ROWS, ids=lambda row: row.route)
def test_tools_refuse_bad_values_naming_the_argument(world, row: Row):
    problems = []
    base = world.fill(row.body)
    fields = list(base) or ["unknown"]
    cases = [(f, n, dict(base, **{f: v})) for f in fields for n, v in BAD_VALUES.items()]
    cases.append(("colour", "unknown argument", dict(base, colour="red")))
    for field, name, arguments in cases:
        with rolled_back():
            result = call_tool(world.secrets["owner"], row.route, arguments)
        answer = structured(result)
        if not result.is_error:
            continue
        error = answer["error"]
        if error["code"] == "internal" or field not in named(error["details"]):
            problems.append((field, name, error))
    assert not problems, problems


POSTS = [row for row in DASHBOARD_ROWS if row.method == "post" and row.expect["owner"] == OK]
FORM_VALUES = {"nul": "a\x00b", "huge": "x" * 300_000, "sql": "'; DROP TABLE x; --", "empty": ""}


@pytest.mark.parametrize("row", POSTS, ids=lambda row: row.id)
def test_dashboard_forms_never_answer_5xx(world, row: Row):
    client = world.browser("owner")
    base = world.fill(row.body) or {"unknown": "x"}
    for field in base:
        for name, value in FORM_VALUES.items():
            with rolled_back():
                response = client.post(world.fill(row.path), dict(base, **{field: value}))
            assert response.status_code < 500, (field, name, response.status_code)
    for template in _with_bad_ids(row):
        with rolled_back():
            response = client.post(world.fill(template), base)
        assert response.status_code == 404, template


@pytest.mark.parametrize(
    "path",
    [
        "/?q=%00",
        "/?scope=%00",
        "/?cursor=%00",
        "/?q=%ff",
        "/?kind=%00",
        "/activity/?cursor=%00",
        "/activity/?operation=%00",
        "/?q=" + "a" * 5000,
        "/memories/%00/",
        "/scopes/%ff/",
    ],
)
def test_dashboard_bad_query_and_path_values(world, path: str):
    response = world.browser("owner").get(path)
    assert response.status_code < 500, response.status_code
    if "/memories/" in path or "/scopes/" in path:
        assert response.status_code == 404


def test_dashboard_account_deletion_form_never_answers_5xx(world):
    """The owner's row answers 409 (sole admin), so the matrix above skips it: an outsider,
    whose account could go, sends every bad value instead."""
    [row] = [row for row in DASHBOARD_ROWS if row.route == "dashboard:account_delete"]
    client = world.browser("outsider")
    for field in [*row.body, "delete_shared_writes"]:
        for name, value in FORM_VALUES.items():
            with rolled_back():
                response = client.post(row.path, dict(row.body, **{field: value}))
            assert response.status_code < 500, (field, name, response.status_code)


@pytest.mark.parametrize(
    "row",
    [r for r in DASHBOARD_ROWS if r.method == "get" and "{export}" in r.path],
    ids=lambda row: row.id,
)
def test_dashboard_export_pages_answer_404_to_bad_ids(world, row: Row):
    client = world.browser("owner")
    for template in _with_bad_ids(row):
        assert client.get(world.fill(template)).status_code == 404, template
