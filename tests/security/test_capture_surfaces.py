"""Capture's surfaces: the ingest ledger bound to the scope written to, import into each scope and
its piece limit, and what bootstrap and import read from disk.

A repository's symbolic links are its author's choice: bootstrap and import follow one only
while its target stays inside the folder they walk, and print every link they skip. A file the
operator names on the import command line is read wherever it points. One imported file holds at
most ZM_IMPORT_MAX_PIECES pieces on every import surface; more is refused before any write."""

from __future__ import annotations

import hashlib
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from memories.models import Chunk, Memory
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured
from tests.security.surfaces import API_ROWS
from tests.security.surfaces_tools import TOOL_ROWS
from tests.security.world import build_world


@pytest.fixture
def personal(tenancy):
    return tenancy.owner.owned_scopes.get(kind="personal")


TEXT = "user: we never call Stripe inside a request handler, webhooks go through the queue."

DIGEST = hashlib.sha256(TEXT.encode()).hexdigest()


def ingest(client, **body):
    return client.post(
        "/api/v1/ingest",
        {"source_kind": "transcript", "client": "claude-code", **body},
        format="json",
    )


def test_the_ledger_answers_only_about_the_scope_asked(tenancy, api, personal):
    team = tenancy.team.public_id
    stored = ingest(api(tenancy.owner), content=TEXT, scope=team)
    assert stored.status_code == 202, stored.json()
    team_chunk = stored.json()["chunk"]["id"]
    restricted = api(tenancy.owner, scopes=[personal])
    probe = ingest(restricted, chunk_hash=DIGEST, probe=True)
    assert probe.status_code == 200 and probe.json() == {"chunk": None}
    token = make_token(tenancy.owner, scopes=[personal])
    answer = structured(
        call_tool(
            token,
            "ingest",
            {"content": TEXT, "source_kind": "transcript", "chunk_hash": DIGEST, "probe": True},
        )
    )
    assert answer["chunk"] is None
    # The same text into the personal scope is stored there, not answered with the team chunk.
    mine = ingest(restricted, content=TEXT)
    assert mine.status_code == 202 and mine.json()["chunk"]["id"] != team_chunk
    again = ingest(api(tenancy.owner), content=TEXT, scope=team)
    assert again.status_code == 200
    assert (again.json()["chunk"]["id"], again.json()["chunk"]["duplicate"]) == (team_chunk, True)
    assert Chunk.objects.filter(chunk_hash=DIGEST).count() == 2


def test_a_removed_member_gets_no_answer_about_the_team_chunk(tenancy, api):
    writer = api(tenancy.writer)
    team = tenancy.team.public_id
    team_chunk = ingest(writer, content=TEXT, scope=team).json()["chunk"]["id"]
    assert api(tenancy.owner).delete(f"/api/v1/scopes/{team}/members/writer").status_code == 204
    assert ingest(writer, chunk_hash=DIGEST, probe=True).json() == {"chunk": None}
    own = ingest(writer, content=TEXT)
    assert own.status_code == 202 and own.json()["chunk"]["id"] != team_chunk
    assert team_chunk not in own.content.decode()


def test_the_same_file_imports_into_each_scope(tenancy, api):
    writer = api(tenancy.writer)
    body = {
        "source_tool": "claude-md",
        "source_path": "CLAUDE.md",
        "content": "# Project\n\n## Testing\n\nRun `make test` before every push.\n",
    }
    mine = writer.post("/api/v1/import", body, format="json").json()["results"]
    team = writer.post(
        "/api/v1/import", {**body, "scope": tenancy.team.public_id}, format="json"
    ).json()["results"]
    assert [r["outcome"] for r in mine] == [r["outcome"] for r in team] == ["created"]
    assert mine[0]["memory"] != team[0]["memory"]
    again = writer.post(
        "/api/v1/import", {**body, "scope": tenancy.team.public_id}, format="json"
    ).json()["results"]
    assert [(r["outcome"], r["memory"]) for r in again] == [("already_imported", team[0]["memory"])]


OUTSIDE = "The office plant outside the repository is named kumquat-9931."


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder outside every repository of the test, holding what must never be read."""
    folder = tmp_path / "home"
    (folder / "notes").mkdir(parents=True)
    (folder / "secret.md").write_text(f"## Secret\n\n{OUTSIDE}\n")
    (folder / "notes" / "more.md").write_text(f"## More\n\n{OUTSIDE}\n")
    return folder


def test_bootstrap_reads_no_document_through_a_link_out_of_the_repository(
    tenancy, tmp_path, settings, outside
):
    settings.ANTHROPIC_API_KEY = ""  # chunks are stored and wait; nothing is extracted
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "README.md").write_text("# Repo\n\nThe service answers on port 8080.\n")
    (repo / "NOTES.md").write_text("Releases are cut on Thursdays.\n")
    (repo / "docs" / "guide.md").write_text("# Guide\n\nDeploys run from the release branch.\n")
    (repo / "docs" / "leak.md").symlink_to(outside / "secret.md")
    (repo / "docs" / "notes").symlink_to(outside / "notes", target_is_directory=True)
    (repo / "docs" / "broken.md").symlink_to(repo / "missing.md")
    (repo / "docs" / "notes.md").symlink_to("../NOTES.md")  # inside the tree: read
    (repo / "docs" / "again.md").symlink_to("guide.md")  # a second path to a file
    (repo / "docs" / "loop").symlink_to(".", target_is_directory=True)  # a cycle
    (repo / "docs" / "one.md").symlink_to("two.md")  # a cycle of links
    (repo / "docs" / "two.md").symlink_to("one.md")
    (repo / "README.extra.md").symlink_to(outside / "secret.md")
    out = StringIO()
    call_command("bootstrap", str(repo), "--user", "writer", "--docs-only", stdout=out)
    stored = dict(Chunk.objects.values_list("source_path", "content"))
    assert not [path for path, text in stored.items() if "kumquat" in text], stored
    assert sorted(stored) == ["README.md", "docs/guide.md", "docs/notes.md"]
    assert "Releases are cut on Thursdays" in stored["docs/notes.md"]
    printed = out.getvalue()
    for path in ("README.extra.md", "docs/leak.md", "docs/notes"):
        assert f"skipped {path}: a link to {outside.resolve()}" in printed, printed
    assert f"outside {repo.resolve()}" in printed
    assert "skipped docs/broken.md: a link to nothing" in printed
    assert "skipped docs/again.md: another path to" in printed
    assert "skipped docs/loop: another path to" in printed
    assert "skipped docs/one.md: a link" in printed and "skipped docs/two.md: a link" in printed
    assert "sent 3 new chunks" in printed


def test_import_walks_no_link_out_of_a_folder_but_reads_a_file_named_outright(
    tenancy, tmp_path, outside
):
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    (project / "AGENTS.md").write_text("## Tests\n\nRun `make test` before every push.\n")
    (project / "CLAUDE.md").symlink_to(outside / "secret.md")
    (project / "memory" / "notes.md").symlink_to(outside / "notes" / "more.md")
    (project / "memory" / "up").symlink_to("..", target_is_directory=True)
    out = StringIO()
    call_command("import", str(project), "--user", "writer", stdout=out)
    printed = out.getvalue()
    assert [m.content for m in Memory.objects.all()] == [
        "Tests\n\nRun `make test` before every push."
    ]
    assert f"skipped {project / 'CLAUDE.md'}: a link to {outside.resolve()}" in printed
    assert f"skipped {project / 'memory' / 'notes.md'}: a link to" in printed
    assert f"skipped {project / 'memory' / 'up'}: another path to" in printed
    # The operator names the link itself: their choice, so it is read.
    call_command("import", str(project / "CLAUDE.md"), "--user", "writer", stdout=StringIO())
    assert Memory.objects.filter(content__contains="kumquat").count() == 1


def sections(count: int) -> str:
    return "\n\n".join(f"## Rule {n}\n\nRule {n} of the house style applies." for n in range(count))


# Every import surface: a REST route or MCP tool whose request names a source tool. A new one
# (an MCP import tool, a second route) joins the checks below by itself.
IMPORTS = [row for row in API_ROWS + TOOL_ROWS if "source_tool" in (row.body or {})]


def test_the_import_surfaces_are_found():
    assert [row.id for row in IMPORTS] == ["post api-import"]


@pytest.mark.parametrize("row", IMPORTS, ids=lambda row: row.id)
def test_an_import_of_more_pieces_than_the_limit_is_refused_before_any_write(
    db, kinds_seeded, settings, row
):
    settings.IMPORT_MAX_PIECES = 3
    world = build_world()
    before = Memory.objects.count()
    body = dict(world.fill(row.body), content=sections(4))
    answer = world.api("owner").post(row.path, body, format="json")
    assert answer.status_code == 400, answer.content
    error = answer.json()["error"]
    assert error["code"] == "validation_failed" and list(error["details"]) == ["content"]
    assert "4 pieces" in error["message"] and "at most 3" in error["message"]
    assert Memory.objects.count() == before
    body["content"] = sections(3)
    answer = world.api("owner").post(row.path, body, format="json")
    assert [piece["outcome"] for piece in answer.json()["results"]] == ["created"] * 3


def test_the_import_command_refuses_a_file_over_the_limit_before_writing_any(
    tenancy, tmp_path, settings
):
    settings.IMPORT_MAX_PIECES = 3
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "AGENTS.md").write_text(sections(2))
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "CLAUDE.md").write_text(sections(4))
    with pytest.raises(CommandError, match="holds 4 pieces; one import takes at most 3"):
        call_command("import", str(tmp_path), "--user", "writer", stdout=StringIO())
    assert not Memory.objects.exists()  # not even the first file's
