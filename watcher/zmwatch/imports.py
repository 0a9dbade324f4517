"""`zm-watch import`: the agents' own memory files of the projects to capture (CLAUDE.md,
AGENTS.md, .cursor/rules/*.mdc, and Claude Code's auto-memory files) sent to POST
/api/v1/import. The server imports each piece once, so running it again writes nothing new."""

from __future__ import annotations

import glob
import os
from pathlib import Path

from zmwatch import consent
from zmwatch.adapters import adapter_for
from zmwatch.adapters.common import folder_name
from zmwatch.api import Client, Refused, Unreachable
from zmwatch.config import Config
from zmwatch.state import State

MAX_CHARS = 200_000


def _claude_memory_dir(project: Path, home: Path) -> Path:
    """Claude Code keeps a project's auto memory under ~/.claude/projects/<folder>/memory/."""
    return home / ".claude" / "projects" / folder_name(str(project)) / "memory"


def agent_files(project: Path, home: Path) -> list[tuple[str, Path, Path]]:
    """(source tool, file, the folder the file must resolve inside)."""
    found = [
        (tool, project / name, project)
        for tool, name in (("claude-md", "CLAUDE.md"), ("agents-md", "AGENTS.md"))
        if (project / name).is_file()
    ]
    found += [
        ("cursor-rules", rule, project)
        for rule in sorted((project / ".cursor" / "rules").rglob("*.mdc"))
    ]
    memory_dir = _claude_memory_dir(project, home)
    found += [
        ("claude-memory", memory, memory_dir)
        for memory in sorted(memory_dir.glob("*.md"))
        if memory.name != "MEMORY.md"  # the index of the others
    ]
    return found


def _inside(path: Path, folder: Path) -> bool:
    """Whether the file resolves inside its folder. A project's links are its author's choice:
    CLAUDE.md → ~/.aws/credentials must not be sent to a team scope."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except RuntimeError:  # a cycle of links (before Python 3.13)
        return False


def known_projects(config: Config, state: State, home: Path) -> list[Path]:
    """The projects of the transcripts followed, and those the allowlist names outright."""
    projects = set()
    for path in state.files:
        adapter = adapter_for(Path(path), home)
        context = adapter.context(Path(path)) if adapter else None
        project = consent.project_of(context.cwd) if context else None
        if project is not None:
            projects.add(project)
    for pattern in config.allow:
        for folder in glob.glob(os.path.expanduser(pattern)):
            if consent.project_of(folder) == Path(folder):
                projects.add(Path(folder))
    return sorted(projects)


def import_projects(*, client: Client, config: Config, projects: list[Path], home: Path) -> int:
    """Send each allowed project's agent files; print what the server did. Failures: 1."""
    status = 0
    for project in projects:
        if not consent.allowed(consent.project_of(str(project)), config):
            print(f"{project}: not captured (no allowlist entry or .zero-memory-allow), skipped")
            continue
        for tool, path, folder in agent_files(project, home):
            if not _inside(path, folder):
                print(f"{path}: a link that leads out of {folder}, skipped")
                continue
            content = path.read_text(encoding="utf-8", errors="replace")
            if not content.strip():
                continue
            if len(content) > MAX_CHARS:
                print(f"{path}: longer than {MAX_CHARS} characters, skipped")
                continue
            body = {
                "source_tool": tool,
                "source_path": str(path),
                "content": content,
                "scope": consent.scope_for(project, config),
            }
            try:
                results = (client.import_file(body).body or {}).get("results", [])
            except (Refused, Unreachable) as exc:
                print(f"{path}: {exc}")
                status = 1
                continue
            outcomes: dict[str, int] = {}
            for result in results:
                outcomes[result["outcome"]] = outcomes.get(result["outcome"], 0) + 1
            summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
            print(f"{path}: {summary or 'nothing to import'}")
    return status
