"""Bootstrap a repository: its README and docs as documents, its git log as history, through
ingest; a second run sends nothing new."""

from __future__ import annotations

import subprocess
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from memories.capture.bootstrap import split_paragraphs
from memories.models import Chunk, Memory
from tests.fakes.anthropic_api import memories_answer
from tests.memories.capture.support import candidate


def test_paragraph_split_keeps_pieces_under_the_limit():
    text = "\n\n".join(f"Paragraph {n}. " + "word " * 50 for n in range(100))
    pieces = split_paragraphs(text, limit=1000)
    assert all(len(piece) <= 1000 for piece in pieces)
    assert "\n\n".join(pieces).replace("\n\n", "") == text.replace("\n\n", "")
    assert split_paragraphs("x" * 2500, limit=1000) == ["x" * 1000, "x" * 1000, "x" * 500]


def test_this_repository_twice_stores_each_chunk_once(tenancy, tmp_path, settings):
    settings.ANTHROPIC_API_KEY = ""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    (repo / "README.md").write_text(readme)
    (repo / "docs" / "deploy.md").write_text("# Deploy\n\nWe deploy on Tuesdays.\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run(
        [*git, "commit", "-qm", "Use blue-green deploys because rollbacks were slow"], check=True
    )
    out = StringIO()
    call_command("bootstrap", str(repo), "--user", "writer", "--dry-run", stdout=out)
    assert not Chunk.objects.exists() and "would send" in out.getvalue()
    call_command("bootstrap", str(repo), "--user", "writer", stdout=StringIO())
    kinds = sorted(Chunk.objects.values_list("source_kind", flat=True))
    expected_docs = len(split_paragraphs(readme)) + 1
    assert kinds.count("document") == expected_docs and kinds.count("history") == 1
    history = Chunk.objects.get(source_kind="history")
    assert "blue-green deploys because rollbacks were slow" in history.content
    out = StringIO()
    call_command("bootstrap", str(repo), "--user", "writer", stdout=out)
    assert f"sent 0 new chunks; {expected_docs + 1} already known" in out.getvalue()
    assert Chunk.objects.count() == expected_docs + 1


def test_this_readme_and_a_claude_md_twice_write_memories_once(
    tenancy, tmp_path, settings, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    """Bootstrap (extraction through the fake Messages API) and import, each run twice: the
    second run of each writes no memory and makes no LLM call."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text((Path(settings.BASE_DIR) / "README.md").read_text())
    claude_md = repo / "CLAUDE.md"
    claude_md.write_text("# Notes\n\n## Testing\n\nRun `make test` before every push.\n")
    # Every chunk gets the same answer; a candidate whose evidence is not in the chunk is dropped.
    fake_anthropic.default = memories_answer(
        [
            candidate(
                "zero-memory keeps every memory in canonical English, with its original text.",
                "fact",
                0.95,
                "Every memory is kept in canonical English, with its original text beside it.",
            )
        ]
    )

    def both() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            call_command(
                "bootstrap", str(repo), "--user", "writer", "--docs-only", stdout=StringIO()
            )
        call_command("import", str(claude_md), "--user", "writer", stdout=StringIO())

    both()
    calls = len(fake_anthropic.requests)
    assert calls == len(split_paragraphs((repo / "README.md").read_text()))
    assert Memory.objects.count() == 2, Memory.objects.values_list("content", flat=True)
    both()
    assert len(fake_anthropic.requests) == calls and Memory.objects.count() == 2
