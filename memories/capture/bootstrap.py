"""Bootstrap: a repository's documents and history, cut into chunks for ingest.

Documents are README*.md at the top and docs/**/*.md, split on paragraph boundaries at about
24,000 characters; history is `git log -n 300`, at most 100 commits a chunk. Each chunk goes
through ingest (so the ledger makes a second bootstrap a no-op). No document is read through a
link that leads out of the repository (`memories.capture.tree`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memories.capture.tree import Found, TreeWalk
from memories.models import ChunkSource

DOCUMENT_CHARS = 24_000
HISTORY_COMMITS = 300
COMMITS_PER_CHUNK = 100
_COMMIT_SEPARATOR = "\x1e"


@dataclass(frozen=True)
class RepoChunk:
    source_kind: str
    source_path: str
    content: str


def split_paragraphs(text: str, *, limit: int = DOCUMENT_CHARS) -> list[str]:
    """Pieces of at most about `limit` characters, cut between paragraphs (a longer paragraph
    alone is cut at the limit)."""
    pieces, current = [], ""
    for paragraph in text.split("\n\n"):
        while len(paragraph) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(paragraph[:limit])
            paragraph = paragraph[limit:]
        candidate = f"{current}\n\n{paragraph}" if current else paragraph
        if len(candidate) > limit:
            pieces.append(current)
            current = paragraph
        else:
            current = candidate
    if current.strip():
        pieces.append(current)
    return [piece for piece in pieces if piece.strip()]


def document_files(repo: Path) -> TreeWalk:
    walk = TreeWalk(repo, wanted=lambda path: path.suffix == ".md")
    for readme in sorted(repo.glob("README*.md")):
        walk.add(readme)
    if (repo / "docs").exists() or (repo / "docs").is_symlink():
        walk.add(repo / "docs")
    return walk


def documents(repo: Path, found: list[Found]) -> Iterator[RepoChunk]:
    for document in found:
        text = document.real.read_text(encoding="utf-8", errors="replace")
        relative = document.path.relative_to(repo).as_posix()
        for piece in split_paragraphs(text):
            yield RepoChunk(ChunkSource.DOCUMENT, relative, piece)


def history(repo: Path, *, commits: int = HISTORY_COMMITS) -> Iterator[RepoChunk]:
    log = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "log",
            "-n",
            str(commits),
            f"--format=%H %ad%n%B{_COMMIT_SEPARATOR}",
            "--date=short",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entries = [entry.strip() for entry in log.split(_COMMIT_SEPARATOR) if entry.strip()]
    for start in range(0, len(entries), COMMITS_PER_CHUNK):
        batch = entries[start : start + COMMITS_PER_CHUNK]
        yield RepoChunk(ChunkSource.HISTORY, "git log", "\n\n".join(batch))
