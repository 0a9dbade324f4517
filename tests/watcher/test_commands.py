"""`zm-watch login`, `hook`, `import` and `status` against the live test server."""

from __future__ import annotations

import json
import stat

from memories.models import Memory
from tests.served import wait_for
from tests.watcher.support import append, claude_line, said, stored_chunks, times_stored


def test_login_checks_the_token_before_writing_a_0600_config(home, watch, gate, token):
    watcher = watch()
    home.config_file.unlink()
    refused = watcher.run("login", gate.url, "--token", "zm_wrong")
    assert refused.returncode == 1 and "Nothing was written" in refused.stdout
    assert not home.config_file.exists()
    done = watcher.run("login", gate.url, "--token", token)
    assert done.returncode == 0, done.stderr
    assert "as dev" in done.stdout
    assert stat.S_IMODE(home.config_file.stat().st_mode) == 0o600
    assert json.loads(home.config_file.read_text()) == {"url": gate.url, "token": token}
    assert [p.path for p in gate.passed] == ["/api/v1/me", "/api/v1/me"]


def test_a_config_file_others_can_read_stops_every_command(home, watch):
    watcher = watch()
    home.config_file.chmod(0o644)
    for command in (["run", "--once"], ["status"], ["import"]):
        done = watcher.run(*command)
        assert done.returncode == 2 and "chmod 600" in done.stderr


def test_the_hook_returns_before_the_send_is_done_and_the_send_arrives(home, watch, gate):
    transcript = home.claude_transcript()
    append(transcript, claude_line("user", said(1), cwd=home.project))
    gate.held.set()  # the server's answer is held back: the send cannot finish
    event = {
        "session_id": "s-1",
        "transcript_path": str(transcript),
        "cwd": str(home.project),
        "hook_event_name": "Stop",
    }
    done = watch().run("hook", stdin=json.dumps(event), timeout=30)
    assert done.returncode == 0, done.stderr
    assert gate.holding.acquire(timeout=60)  # the detached child's send, after the hook returned
    assert times_stored(said(1)) == 1


def test_status_shows_files_offsets_the_spool_and_the_last_error(home, watch, gate):
    transcript = home.claude_transcript()
    append(transcript, claude_line("user", said(1), cwd=home.project))
    watcher = watch()
    assert watcher.run("run", "--once").returncode == 0
    gate.shut()
    append(transcript, claude_line("assistant", said(2), cwd=home.project))
    assert watcher.run("run", "--once").returncode == 1
    status = watcher.run("status").stdout
    assert f"{transcript}: offset " in status
    assert "spool: 1 chunk(s) waiting" in status
    assert "last error" in status and "did not answer" in status
    assert len(stored_chunks()) == 1


def test_import_sends_the_agent_files_of_allowed_projects_once(home, watch, gate):
    project = home.project
    (project / "CLAUDE.md").write_text(
        "# Shop\n\n## Tests\n\nRun `make test` before every push.\n\n"
        "## Style\n\nUse ruff; line length 100.\n"
    )
    (project / "AGENTS.md").write_text("## Commits\n\nOne concern per commit, ticket id first.\n")
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "sql.mdc").write_text(
        "---\ndescription: SQL style\n---\nAlways name constraints explicitly.\n"
    )
    memory = home.claude_folder() / "memory"
    memory.mkdir(parents=True)
    (memory / "feedback_merges.md").write_text(
        "---\nname: No squash merges\ntype: feedback\n---\nNever squash merge on this repo.\n"
    )
    (memory / "MEMORY.md").write_text("- [No squash merges](feedback_merges.md)\n")
    private = home.repo("private")
    (private / "CLAUDE.md").write_text("## Secret plans\n\nNothing to see.\n")
    watcher = watch()
    done = watcher.run("import", str(project), str(private))
    assert done.returncode == 0, done.stderr
    assert f"{private}: not captured" in done.stdout
    tools = sorted(p.body["source_tool"] for p in gate.passed if p.path == "/api/v1/import")
    assert tools == ["agents-md", "claude-md", "claude-memory", "cursor-rules"]
    contents = sorted(Memory.objects.values_list("content", flat=True))
    assert len(contents) == 5 and not any("Secret plans" in c for c in contents)
    again = watcher.run("import", str(project))
    assert again.stdout.count("already_imported") == 4 and Memory.objects.count() == 5


def test_import_finds_the_projects_of_followed_transcripts(home, watch, gate):
    (home.project / "AGENTS.md").write_text("## Commits\n\nOne concern per commit.\n")
    append(home.claude_transcript(), claude_line("user", said(1), cwd=home.project))
    watcher = watch(allow=[])
    (home.project / ".zero-memory-allow").touch()
    assert watcher.run("run", "--once").returncode == 0
    done = watcher.run("import")
    assert "1 created" in done.stdout, done.stdout + done.stderr
    wait_for(lambda: Memory.objects.count() == 1, timeout=5, what="the imported memory")


def test_one_run_at_a_time(home, watch):
    watcher = watch()
    watcher.start()
    wait_for(lambda: "(run)" in watcher.run("status").stdout, timeout=30, what="the first run")
    second = watcher.run("run")
    assert second.returncode == 1 and "another zm-watch run" in second.stderr
