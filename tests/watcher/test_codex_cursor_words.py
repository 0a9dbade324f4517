"""Codex and Cursor: the person's words are kept (a Codex prompt starting with `<` included),
the context the agents inject in the user's name and Cursor's markers are left out, and a
subagent's transcript is never sent as the person's words."""

from __future__ import annotations

from zmwatch.adapters import codex, cursor

from tests.memories.capture.support import TRANSCRIPTS
from tests.watcher.reading import read_entries, read_turns


def test_codex_keeps_words_starting_with_a_tag_and_only_the_request_of_the_ide_preamble():
    assert read_turns(codex, TRANSCRIPTS / "codex-words.jsonl") == [
        "user: <Button> loses focus after submit, fix it",
        "assistant: The form re-mounts the button on submit; keeping its key stable keeps the "
        "focus.",
        "user: why does the docker build fail?",
        "user: the chart's y axis is upside down",  # the image's tags around it left out
        "assistant: The Dockerfile copies package-lock.json, which is not committed.",
    ]
    assert None not in read_entries(codex, TRANSCRIPTS / "codex-words.jsonl")


def test_a_codex_subagent_rollout_is_left_out_whole():
    answers = read_entries(codex, TRANSCRIPTS / "codex-subagent-rollout.jsonl")
    assert answers == [[], [], []]


def test_a_codex_session_after_a_subagent_one_is_read_again():
    reader = codex.Reader()
    meta = {"type": "session_meta", "payload": {"id": "r", "cwd": "/w", "source": "cli"}}
    prompt = {
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Keep the API versioned."}],
        },
    }
    sub = {**meta, "payload": {**meta["payload"], "source": {"subagent": "review"}}}
    assert reader.turns(sub) == [] and reader.turns(prompt) == []
    assert reader.turns(meta) == [] and reader.turns(prompt) == ["user: Keep the API versioned."]
    assert reader.turns({"type": "rollout_line_v9", "payload": {}}) is None


def test_cursor_leaves_out_its_markers_timestamps_and_added_context():
    assert read_turns(cursor, TRANSCRIPTS / "cursor-words.jsonl") == [
        "user: The release notes page is blank. Why?",
        "assistant: The page reads `RELEASE.md`, which was renamed.",
        "user: Rename it back, we link to it from the app.",
    ]
    assert None not in read_entries(cursor, TRANSCRIPTS / "cursor-words.jsonl")


def test_a_cursor_subagent_transcript_is_left_out(tmp_path):
    path = tmp_path / "agent-transcripts" / "c-1" / "subagents" / "child.jsonl"
    entry = {"role": "user", "message": {"content": [{"type": "text", "text": "Run ls."}]}}
    assert cursor.reader(path).turns(entry) == []
    assert cursor.reader(path.parent.parent / "c-1.jsonl").turns(entry) == ["user: Run ls."]


def test_cursor_takes_its_redacted_markers_off_both_ends_of_a_turn():
    text = "[REDACTED]\n\nThe build needs Node 22.\n\n[REDACTED]"
    entry = {"role": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
    assert cursor.Reader().turns(entry) == ["assistant: The build needs Node 22."]
