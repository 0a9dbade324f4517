"""The watcher, run as a program, delivering to the live test server: chunks arrive as ingest
expects them, a torn last line waits until it is whole, and a transcript that was truncated or
replaced is read again from its start."""

from __future__ import annotations

from memories.models import ChunkSource
from tests.memories.capture.support import TRANSCRIPTS, claude_code_chunk
from tests.watcher.support import append, claude_line, said, stored_chunks, times_stored


def test_a_claude_code_session_arrives_as_the_chunk_ingest_expects(home, watch, gate):
    transcript = home.claude_transcript()
    fixture = (TRANSCRIPTS / "claude-code-session.jsonl").read_text()
    transcript.write_text(fixture.replace("/home/dev/shop", str(home.project)))
    done = watch().run("run", "--once")
    assert done.returncode == 0, done.stderr
    [chunk] = stored_chunks()
    assert chunk.content == claude_code_chunk()
    assert chunk.source_kind == ChunkSource.TRANSCRIPT
    assert (chunk.client, chunk.conversation_id) == ("claude-code", "s-1")
    assert chunk.source_path == str(transcript)
    assert chunk.scope.kind == "personal" and chunk.user.username == "dev"
    assert [p.status for p in gate.ingests()] == [202]


def test_a_torn_last_line_is_sent_once_it_is_whole(home, watch):
    transcript = home.claude_transcript()
    watcher = watch()
    whole = claude_line("user", said(1), cwd=home.project)
    torn = claude_line("assistant", said(2), cwd=home.project)
    append(transcript, whole + torn[:40])
    assert watcher.run("run", "--once").returncode == 0
    assert times_stored(said(1)) == 1
    assert times_stored(said(2)) == 0 and "Turn 2" not in stored_chunks()[0].content
    append(transcript, torn[40:])
    assert watcher.run("run", "--once").returncode == 0
    assert times_stored(said(1)) == 1 and times_stored(said(2)) == 1


def test_a_truncated_or_replaced_transcript_is_read_again_from_its_start(home, watch):
    transcript = home.claude_transcript()
    watcher = watch()
    append(transcript, "".join(claude_line("user", said(n), cwd=home.project) for n in (1, 2, 3)))
    assert watcher.run("run", "--once").returncode == 0
    transcript.write_text(claude_line("user", said(4), cwd=home.project))  # truncated
    assert watcher.run("run", "--once").returncode == 0
    replacement = transcript.with_name("new.tmp")
    replacement.write_text(
        "".join(claude_line("user", said(n), cwd=home.project) for n in (5, 6, 7, 8))
    )
    replacement.replace(transcript)  # rotated: the path names another file, a longer one
    assert watcher.run("run", "--once").returncode == 0
    assert [times_stored(said(n)) for n in range(1, 9)] == [1] * 8
    status = watcher.run("status").stdout
    assert (
        f"{transcript}: offset {transcript.stat().st_size} of {transcript.stat().st_size} bytes"
        in status
    )
    assert "spool: 0 chunk(s) waiting" in status
