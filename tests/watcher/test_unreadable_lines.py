"""No line stops capture, against the live test server: a lone surrogate, NUL padding, a byte
that is not UTF-8 and a line that is not JSON sit in one transcript, and in one pass its
other lines and the other transcripts all arrive; the line that is not JSON is counted and
its position shown by `zm-watch status`. A transcript of an unknown format is reported, and
a turn longer than the cap arrives as its head and tail."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.watcher.support import claude_line, stored_chunks


def stored_text() -> str:
    return "\n".join(chunk.content for chunk in stored_chunks())


def codex_rollout(home, text: str):
    path = home.root / ".codex/sessions/2026/11/21/rollout-2026-11-21T09-00-00-r-1.jsonl"
    path.parent.mkdir(parents=True)
    meta = {"type": "session_meta", "payload": {"id": "r-1", "cwd": str(home.project)}}
    prompt = {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        },
    }
    path.write_text(json.dumps(meta) + "\n" + json.dumps(prompt) + "\n")
    return path


def test_bad_lines_are_read_or_skipped_and_everything_else_arrives_in_one_pass(home, watch):
    cwd = home.project
    # JSON's own escapes for half an emoji, and a latin-1 byte where UTF-8 was expected
    surrogate = claude_line(
        "user", "emoji cut in half: HALF then the rule: never force-push main", cwd=cwd
    )
    latin1 = claude_line("user", "cafE: keep this decision", cwd=cwd).encode()
    transcript = home.claude_transcript()
    transcript.write_bytes(
        claude_line("user", "first, before the bad lines", cwd=cwd).encode()
        + surrogate.replace("HALF", "\\ud83d").encode()
        + b"\x00" * 16
        + claude_line("user", "after NUL padding: deploy only on Fridays", cwd=cwd).encode()
        + latin1.replace(b"cafE", b"caf\xe9")
        + b"this line is not JSON at all\n"
        + claude_line("assistant", "last, after the bad lines", cwd=cwd).encode()
    )
    other = home.claude_transcript(session="s-2")
    other.write_text(claude_line("user", "the other session is read too", cwd=cwd, session="s-2"))
    codex_rollout(home, "and so is the Codex rollout")
    watcher = watch()
    done = watcher.run("run", "--once")
    assert done.returncode == 0, done.stderr
    text = stored_text()
    for said in (
        "user: first, before the bad lines",
        "user: emoji cut in half: \ufffd then the rule: never force-push main",
        "user: after NUL padding: deploy only on Fridays",
        "user: caf\ufffd: keep this decision",
        "assistant: last, after the bad lines",
        "user: the other session is read too",
        "user: and so is the Codex rollout",
    ):
        assert text.count(said) == 1, said
    assert "not JSON at all" not in text
    position = transcript.read_bytes().index(b"this line is not JSON")
    status = watcher.run("status").stdout
    size = transcript.stat().st_size
    assert f"{transcript}: offset {size} of {size} bytes" in status
    assert f"1 unreadable line(s) skipped (the last at byte {position})" in status
    assert f"skipped a line that is not JSON at byte {position}" in done.stderr
    again = watcher.run("run", "--once")  # nothing new: nothing sent, nothing counted twice
    assert again.returncode == 0 and len(stored_chunks()) == 3
    assert "1 unreadable line(s)" in watcher.run("status").stdout


def test_a_transcript_of_an_unknown_format_is_reported(home, watch):
    transcript = home.claude_transcript()
    lines = [
        json.dumps({"type": "turn-v9", "cwd": str(home.project), "body": f"said {n}"}) + "\n"
        for n in range(12)
    ]
    transcript.write_text(
        claude_line("user", "one line of the old format", cwd=home.project) + "".join(lines)
    )
    watcher = watch()
    done = watcher.run("run", "--once")
    assert done.returncode == 0, done.stderr
    assert "12 of 13 entries are of kinds the claude-code reader does not know" in done.stderr
    status = watcher.run("status").stdout
    assert "unknown format: 12 of 13 entries are of kinds the watcher does not know" in status
    assert "user: one line of the old format" in stored_text()


def test_a_turn_longer_than_the_cap_keeps_its_head_and_tail(home, watch):
    pasted = "HEAD " + "".join(f"log line {n}\n" for n in range(30_000)) + " TAIL"
    home.claude_transcript().write_text(claude_line("user", pasted, cwd=home.project))
    watcher = watch(max_turn_chars=4000)
    assert watcher.run("run", "--once").returncode == 0
    chunks = stored_chunks()
    text = "".join(chunk.content for chunk in chunks)
    cut = len("user: " + pasted) - 4000
    assert f"[… {cut:,} characters cut …]" in text
    assert "user: HEAD log line 0" in text and text.endswith("log line 29999\n TAIL")
    assert "log line 15000\n" not in text
    assert len(chunks) <= 6  # 4,000 characters in chunks of 1,000, not 300 chunks


def test_a_transcript_whose_file_name_is_not_utf8_is_delivered(home, watch):
    folder = home.claude_folder()
    folder.mkdir(parents=True)
    transcript = Path(os.fsdecode(bytes(folder) + b"/s-caf\xe9.jsonl"))
    transcript.write_text(claude_line("user", "the name is latin-1", cwd=home.project))
    done = watch().run("run", "--once")
    assert done.returncode == 0, done.stderr
    [chunk] = stored_chunks()
    assert chunk.content == "user: the name is latin-1"
    assert chunk.source_path.endswith("/s-caf\ufffd.jsonl")
