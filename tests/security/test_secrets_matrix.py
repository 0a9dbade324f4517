"""The secrets matrix: every secret form in every free-text field of every write, on every surface.

The writes come from the tenancy table (REST routes, MCP tools and dashboard forms, which the
tenancy matrix keeps complete), each with the owner's valid request as the base, plus the
optional free-text fields a route or tool accepts beyond its base (provenance, paths, ids). Each
field in turn holds each secret form; whatever the surface answers (a refusal, or a redacted
store for captured text), the secret's value must appear in no table of tenant data and in no
answer. Each case runs in a savepoint that is rolled back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

from tests.mcp_inproc import call_tool, structured
from tests.memories.archive_support import CLAIMED, ID, archive, memory_bytes, one, path_of
from tests.security.surfaces import API_ROWS, OK, Row
from tests.security.surfaces_pages import DASHBOARD_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.test_bad_input_matrix import rolled_back, send
from tests.security.world import world_fixtures

shared_world, world = world_fixtures(export=True)

VALUE = "Qx7hunter2vLm"  # the password every assignment form carries
KEY_BODY = "MIIEowIBAAKCAQEAzM4rKx9QkR2vT"  # the start of a private key's body
SECRET_FORMS: dict[str, str] = {
    "private key, one line": (
        f"Sign builds with -----BEGIN RSA PRIVATE KEY----- {KEY_BODY}b3Bl "
        "-----END RSA PRIVATE KEY----- before upload."
    ),
    "private key, lines": (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\nAAAAB3Nza\n"
        "-----END OPENSSH PRIVATE KEY-----"
    ),
    "private key, cut off": f"-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\nAAAAB3Nza",
    "env file": f"DB_PASSWORD={VALUE}",
    "env file, export and quotes": f'export DB_PASSWORD="{VALUE}"',
    "spaces around the sign": f"DB_PASSWORD = {VALUE}",
    "prefixed name": f"client_secret={VALUE}",
    "json": f'{{"password": "{VALUE}"}}',
    "yaml": f"database:\n  password: {VALUE}",
    "yaml, quoted": f"db_password: '{VALUE}'",
    "toml": f'secret_key = "{VALUE}"',
    "ini": f"[db]\npassword = {VALUE}",
    "xml": f"<password>{VALUE}</password>",
    "url": f"https://deploy:{VALUE}@git.example.com/r.git",
    "token": "ghp_" + "Qx7hunter2vLm" * 3,
}
MARKERS = (VALUE, KEY_BODY)

# Free-text fields a write accepts beyond its base request.
OPTIONAL_TEXT = {
    "api-memories": ["verbatim", "conversation_id", "source_path", "chunk_hash"],
    "api-ingest": ["client", "conversation_id", "source_path"],
    "api-recall": ["conversation_id"],
    "api-context": ["conversation_id"],
    "remember": ["verbatim"],
    "ingest": ["conversation_id", "source_path"],
}
# Fields that are choices or ids, not free text.
NOT_TEXT = {"kind", "source_kind", "source_tool", "role", "action", "scope", "language", "by"}


def text_fields(row: Row) -> list[str]:
    base = row.body or {}
    fields = [
        name
        for name, value in base.items()
        if isinstance(value, str) and name not in NOT_TEXT and not value.startswith("{")
    ]
    return fields + OPTIONAL_TEXT.get(row.route, [])


def stored_anywhere() -> list[str]:
    """The tables of tenant data (and the users') whose rows hold a marker: one statement, a
    scan of each table's rows as text."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND (table_name LIKE 'memories_%%' OR table_name LIKE 'scopes_%%' "
            "OR table_name = 'auth_user')"
        )
        tables = [name for (name,) in cursor.fetchall()]
        probes = " UNION ALL ".join(
            f"SELECT %s::text WHERE EXISTS "  # noqa: S608
            f'(SELECT 1 FROM "{table}" t WHERE t::text LIKE ANY(%s::text[]))'
            for table in tables
        )
        patterns = [f"%{marker}%" for marker in MARKERS]
        cursor.execute(
            f"SELECT DISTINCT name FROM ({probes}) AS hits(name)",  # noqa: S608
            [value for table in tables for value in (table, patterns)],
        )
        return sorted(name for (name,) in cursor.fetchall())


def leaked(answer: Any) -> bool:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    return any(marker in text for marker in MARKERS)


def cases(row: Row) -> list[tuple[str, str, dict[str, Any]]]:
    base = row.body or {}
    if row.route == "api-memories-batch":
        item = base["items"][0]
        return [
            (f"items.{field}", form, {"items": [dict(item, **{field: text})]})
            for field in ("content", "verbatim", "source_path")
            for form, text in SECRET_FORMS.items()
        ]
    return [
        (field, form, dict(base, **{field: text}))
        for field in text_fields(row)
        for form, text in SECRET_FORMS.items()
    ]


REST_WRITES = [row for row in API_ROWS if row.method != "get" and cases(row)]


@pytest.mark.parametrize("row", REST_WRITES, ids=lambda row: row.id)
def test_rest_writes_store_no_secret_in_any_field(world, row: Row):
    problems = []
    for field, form, template in cases(row):
        with rolled_back():
            response = send(world, row, world.fill(template))
            where = stored_anywhere()
        # A refusal may name the caller's own value back; a stored answer never holds it.
        shown = response.status_code < 400 and leaked(response.content.decode())
        if where or shown or response.status_code >= 500:
            problems.append((field, form, response.status_code, where))
    assert not problems, problems


TOOL_WRITES = [row for row in TOOL_ROWS if cases(row)]


@pytest.mark.parametrize("row", TOOL_WRITES, ids=lambda row: row.route)
def test_tools_store_no_secret_in_any_argument(world, row: Row):
    problems = []
    for field, form, template in cases(row):
        with rolled_back():
            result = call_tool(world.secrets["owner"], row.route, world.fill(template))
            where = stored_anywhere()
        if where or (not result.is_error and leaked(structured(result))):
            problems.append((field, form, where))
    assert not problems, problems


FORM_WRITES = [
    row
    for row in DASHBOARD_ROWS
    if row.method == "post" and row.expect["owner"] == OK and cases(row)
]


@pytest.mark.parametrize("row", FORM_WRITES, ids=lambda row: row.id)
def test_dashboard_forms_store_no_secret_in_any_field(world, row: Row):
    client = world.browser("owner")
    problems = []
    for field, form, template in cases(row):
        with rolled_back():
            response = client.post(world.fill(row.path), world.fill(template))
            where = stored_anywhere()
        if where or response.status_code >= 500:
            problems.append((field, form, response.status_code, where))
    assert not problems, problems


def test_every_write_with_free_text_is_in_the_matrix():
    """A write whose request carries free text and has no secrets case fails here."""
    rows = [row for row in API_ROWS if row.method != "get" and row.body]
    rows += [row for row in TOOL_ROWS if row.body]
    missing = [row.id for row in rows if text_fields(row) == [] and _has_free_text(row)]
    assert not missing, missing
    assert {row.route for row in REST_WRITES} >= {
        "api-memories",
        "api-memories-batch",
        "api-memory",
        "api-forget",
        "api-challenge",
        "api-ingest",
        "api-import",
        "api-scopes",
        "api-scope",
        "api-tokens",
    }


def _has_free_text(row: Row) -> bool:
    return any(
        isinstance(value, str) and name not in NOT_TEXT and not value.startswith("{")
        for name, value in (row.body or {}).items()
    )


# An archive's free-text fields, each filled with a secret form (the import routes' bodies are
# zips, not JSON): every one is refused, and nothing of any is stored.
def _archive_with(field: str, text: str) -> bytes:
    version = {"number": 1, "kind": "fact", "content": "Older.", "created": CLAIMED}
    if field == "content":
        return one(memory_bytes(text))
    if field in ("original", "author.client", "author.user"):
        top, _, inner = field.partition(".")
        value = {"kind": "agent", "client": "", "user": "", inner: text} if inner else text
        return one(**{top: value})
    if field.startswith("provenance."):
        return one(provenance=[{"source": "remember", "created": CLAIMED, field[11:]: text}])
    if field.startswith("versions."):
        return one(versions=[{**version, field[9:]: text}])
    if field == "forgotten.reason":
        gone = memory_bytes(state="forgotten", forgotten={"at": CLAIMED, "reason": text})
        return archive({f"archive/team/fact/{ID}.md": gone})
    conflict = {"id": "cfl_" + ID[4:], "memory_a": ID, "status": "open", "created": CLAIMED}
    return archive(
        {
            path_of(): memory_bytes(),
            "conflicts.json": json.dumps([{**conflict, "rationale": text}]).encode(),
        }
    )


ARCHIVE_FIELDS = (
    "content",
    "original",
    "author.client",
    "author.user",
    *(f"provenance.{name}" for name in ("verbatim", "written_text", "path", "conversation")),
    *("provenance.client", "provenance.author", "versions.content", "versions.original"),
    "forgotten.reason",
    "rationale",
)


def test_rest_imports_store_no_secret_in_any_archive_field(world):
    client = world.api("owner")
    problems = []
    for row in [r for r in API_ROWS if r.extra.get("archive")]:
        for field in ARCHIVE_FIELDS:
            for form, text in SECRET_FORMS.items():
                data = _archive_with(field, text)
                response = client.post(world.fill(row.path), data, content_type="application/zip")
                if response.status_code != 400:
                    problems.append((field, form, response.status_code))
    # Every case was refused before anything was written: one scan finds none of them.
    assert not problems and not stored_anywhere(), (problems, stored_anywhere())


# Another system's file with a secret in each text it holds: the record is refused (or the file
# is), the import goes on, and nothing of the secret is stored or answered back.
def _mem0_with(field: str, text: str) -> dict[str, Any]:
    item: dict[str, Any] = {"id": "m1", "memory": "The cache is warmed at five.", "user_id": "u"}
    if field == "history.old_memory":
        item["history"] = [
            {"id": "h1", "event": "UPDATE", "old_memory": text, "new_memory": item["memory"]}
        ]
    elif field == "metadata.note":
        item["metadata"] = {"note": text}
    else:
        item[field] = text
    return {"results": [item]}


def _letta_with(field: str, text: str) -> Any:
    if field == "passage.text":
        return [{"id": "p1", "text": text}]
    if field == "passage.tags":
        return [{"id": "p1", "text": "The cache is warmed at five.", "tags": [text]}]
    block = {"id": "b1", "label": "human", "value": "Likes short answers."}
    return {"agents": [], "blocks": [{**block, field.split(".")[1]: text}]}


def _supermemory_with(field: str, text: str) -> Any:
    entry = {"id": "m1", "memory": "The cache is warmed at five.", "createdAt": CLAIMED}
    document = {"id": "d1", "title": "Notes", "memoryEntries": [entry]}
    if field.startswith("document."):
        document[field.split(".")[1]] = text
    else:
        entry[field] = text
    return {"documents": [document]}


SOURCE_FIELDS = {
    "mem0": (_mem0_with, ("memory", "id", "user_id", "metadata.note", "history.old_memory")),
    "letta": (_letta_with, ("passage.text", "passage.tags", "block.value", "block.label")),
    "supermemory": (_supermemory_with, ("memory", "id", "document.title", "forgetReason")),
}


def test_imports_from_other_systems_store_no_secret_in_any_field(world):
    client = world.api("owner")
    problems = []
    [row] = [r for r in API_ROWS if r.route == "api-scope-import-from"]
    for system, (build, fields) in SOURCE_FIELDS.items():
        path = world.fill(row.path).replace("/mem0", f"/{system}")
        for field in fields:
            for form, text in SECRET_FORMS.items():
                with rolled_back():
                    response = client.post(
                        path, json.dumps(build(field, text)), content_type="application/json"
                    )
                    where = stored_anywhere()
                if response.status_code >= 500 or where or leaked(response.content.decode()):
                    problems.append((system, field, form, response.status_code, where))
    assert not problems, problems
