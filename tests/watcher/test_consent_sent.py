"""What the server receives when projects are ignored, unlisted or unresolvable: nothing of
them (asserted on the requests that reached the server, and on the chunks it stored)."""

from __future__ import annotations

from tests.watcher.support import append, claude_line, said, stored_chunks


def test_only_allowed_projects_are_sent(home, watch, gate, tmp_path):
    listed = home.project
    by_file = home.repo("blog")
    (by_file / ".zero-memory-allow").touch()
    unlisted = home.repo("private")
    ignored = home.repo("work/client-x")
    (home.root / "src" / "work" / ".zero-memory-ignore").touch()
    no_repo = home.root / "Downloads"
    no_repo.mkdir()
    cases = {listed: 1, by_file: 2, unlisted: 3, ignored: 4, no_repo: 5}
    for cwd, n in cases.items():
        line = claude_line("user", said(n), cwd=cwd, session=f"s-{n}")
        append(home.claude_transcript(cwd, session=f"s-{n}"), line)
    watcher = watch(allow=[str(listed), str(home.root / "src" / "work" / "*")])
    assert watcher.run("run", "--once").returncode == 0
    sent = {p.body["conversation_id"] for p in gate.ingests()}
    assert sent == {"s-1", "s-2"}
    stored = " ".join(chunk.content for chunk in stored_chunks())
    assert "Turn 1:" in stored and "Turn 2:" in stored
    for n in (3, 4, 5):
        assert f"Turn {n}:" not in stored
    status = watcher.run("status").stdout
    assert str(home.claude_transcript(unlisted, session="s-3")) not in status


def test_a_project_ignored_after_its_chunks_were_cut_sends_no_more(home, watch, gate):
    gate.shut()  # the chunks wait in the spool
    watcher = watch()
    append(home.claude_transcript(), claude_line("user", said(1), cwd=home.project))
    watcher.run("run", "--once")
    assert "spool: 1 chunk(s) waiting" in watcher.run("status").stdout
    (home.project / ".zero-memory-ignore").touch()
    gate.open()
    assert watcher.run("run", "--once").returncode == 0
    assert gate.ingests() == [] and stored_chunks() == []
    assert "spool: 0 chunk(s) waiting" in watcher.run("status").stdout
