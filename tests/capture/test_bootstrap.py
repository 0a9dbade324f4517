"""Bootstrap a repository: its README and docs as documents, its git log as history, through
ingest; a second run sends nothing new."""

from __future__ import annotations

import subprocess
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from memories.capture.bootstrap import split_paragraphs
from memories.models import Chunk


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
