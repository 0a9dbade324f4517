"""Import of the agents' own memory files: deterministic, no LLM, and a second import writes
nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from memories.models import Memory, Provenance

CLAUDE_MD = """\
# Project notes

@docs/overview.md

## Testing

Run `make test` before every push; the browser tests need Debian's chromium.

## Imports only

@docs/style.md
@docs/more.md

## Empty

## Releases

Tag releases as `vYYYY.MM.N` and never force-push `main`.
"""

CURSOR_RULE = """\
---
description: Python style
globs: "**/*.py"
alwaysApply: true
---
Use ruff for lint and format; line length 100.
"""

FEEDBACK = """\
---
name: terse answers
type: feedback
---
Answer in short paragraphs, no bullet lists unless asked.
"""

PROJECT = """\
---
name: database
type: project
---
We chose PostgreSQL with pgvector because recall needs vectors and full text in one query.
"""


def post_import(client, tool, path, content, **extra):
    body = {"source_tool": tool, "source_path": path, "content": content, **extra}
    return client.post("/api/v1/import", body, format="json")


def test_each_level_two_section_is_a_convention_and_a_second_import_writes_nothing(
    tenancy, api, fake_anthropic
):
    client = api(tenancy.writer)
    first = post_import(client, "claude-md", "CLAUDE.md", CLAUDE_MD)
    assert first.status_code == 200, first.json()
    results = first.json()["results"]
    assert [(r["title"], r["kind"], r["outcome"]) for r in results] == [
        ("Testing", "convention", "created"),
        ("Releases", "convention", "created"),
    ]
    again = post_import(client, "claude-md", "CLAUDE.md", CLAUDE_MD).json()["results"]
    assert [r["outcome"] for r in again] == ["already_imported", "already_imported"]
    assert [r["memory"] for r in again] == [r["memory"] for r in results]
    assert Memory.objects.count() == 2 and Provenance.objects.count() == 2
    assert fake_anthropic.requests == []  # deterministic: no LLM
    memory = Memory.objects.get(public_id=results[0]["memory"])
    assert (
        memory.content.startswith("Testing\n\nRun `make test`") and memory.author_kind == "capture"
    )


@pytest.mark.parametrize(
    ("tool", "path", "content", "kind"),
    [
        ("cursor-rules", ".cursor/rules/python.mdc", CURSOR_RULE, "convention"),
        ("claude-memory", "memory/terse.md", FEEDBACK, "convention"),
        ("claude-memory", "memory/db.md", PROJECT, "decision"),
        ("claude-memory", "memory/u.md", "---\ntype: user\n---\nI use vim.", "preference"),
        (
            "claude-memory",
            "memory/r.md",
            "---\ntype: reference\n---\nDocs: https://x.dev",
            "reference",
        ),
        (
            "claude-memory",
            "memory/p.md",
            "---\ntype: project\n---\nThe API runs on port 8000.",
            "fact",
        ),
    ],
)
def test_each_format_maps_to_its_kind(tenancy, api, tool, path, content, kind):
    [result] = post_import(api(tenancy.writer), tool, path, content).json()["results"]
    assert (result["kind"], result["outcome"]) == (kind, "created")


def test_import_refuses_an_unknown_tool_and_a_reader(tenancy, api):
    response = post_import(api(tenancy.writer), "vim-notes", "x", "## A\nb")
    assert response.status_code == 400 and "source_tool" in response.json()["error"]["details"]
    team = tenancy.team.public_id
    [result] = post_import(
        api(tenancy.reader), "claude-md", "C.md", "## A\nbody text", scope=team
    ).json()["results"]
    assert result["outcome"] == "forbidden" and not Memory.objects.exists()


def test_the_command_imports_files_once_and_dry_run_lists(tenancy, tmp_path):
    (tmp_path / "CLAUDE.md").write_text(CLAUDE_MD)
    rules = tmp_path / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "python.mdc").write_text(CURSOR_RULE)
    out = StringIO()
    call_command("import", str(tmp_path), "--user", "writer", "--dry-run", stdout=out)
    assert out.getvalue().count("would write") == 3 and not Memory.objects.exists()
    call_command("import", str(tmp_path), "--user", "writer", stdout=StringIO())
    assert Memory.objects.count() == 3
    out = StringIO()
    call_command("import", str(tmp_path), "--user", "writer", stdout=out)
    assert out.getvalue().count("already_imported") == 3 and Memory.objects.count() == 3
    out = StringIO()
    call_command("import", str(tmp_path), "--user", "writer", "--dry-run", stdout=out)
    assert out.getvalue().count("imported before") == 3
