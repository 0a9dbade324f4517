"""`zm-watch import` sends no agent file that is a link out of its project (issue 22, item 5):
whoever wrote the repository chose where its links point."""

from __future__ import annotations

from memories.models import Memory


def test_import_skips_an_agent_file_that_links_out_of_its_project(home, watch, gate, tmp_path):
    outside = tmp_path / "elsewhere"
    (outside / "rules").mkdir(parents=True)
    (outside / "credentials.md").write_text("## Keys\n\nThe office plant is named kumquat-9931.\n")
    (outside / "rules" / "leak.mdc").write_text("---\ndescription: Leak\n---\nkumquat-9931\n")
    project = home.project
    (project / "CLAUDE.md").symlink_to(outside / "credentials.md")
    (project / "docs").mkdir()
    (project / "docs" / "agents.md").write_text("## Commits\n\nOne concern per commit.\n")
    (project / "AGENTS.md").symlink_to("docs/agents.md")  # inside the project: sent
    (project / ".cursor").mkdir()
    (project / ".cursor" / "rules").symlink_to(outside / "rules", target_is_directory=True)
    done = watch().run("import", str(project))
    assert done.returncode == 0, done.stderr
    assert f"{project / 'CLAUDE.md'}: a link that leads out of" in done.stdout
    assert "leak.mdc: a link that leads out of" in done.stdout
    sent = [p.body["source_path"] for p in gate.passed if p.path == "/api/v1/import"]
    assert sent == [str(project / "AGENTS.md")]
    assert not Memory.objects.filter(content__contains="kumquat").exists()
