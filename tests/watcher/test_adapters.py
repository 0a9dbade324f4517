"""Each agent's transcripts, read by its adapter: user and assistant text only, and the
working directory and conversation the transcript names."""

from __future__ import annotations

import json

from zmwatch.adapters import adapter_for, claude_code, codex, cursor
from zmwatch.adapters.common import folder_name

from tests.memories.capture.support import TRANSCRIPTS, claude_code_chunk, codex_chunk
from tests.watcher.reading import read_turns
from tests.watcher.support import claude_line


def turns_of(adapter, name: str) -> list[str]:
    return read_turns(adapter, TRANSCRIPTS / name)


def test_claude_code_keeps_user_and_assistant_text_as_ingest_expects_it():
    turns = turns_of(claude_code, "claude-code-session.jsonl")
    assert "\n\n".join(turns) == claude_code_chunk()
    joined = "\n".join(turns)
    assert "Let me read the file first" not in joined  # thinking
    assert "def handle(event)" not in joined  # a tool result
    assert "Billing retries and the webhook queue" not in joined  # a summary entry


def test_claude_code_skips_meta_compact_summaries_commands_and_side_chains():
    entry = json.loads(claude_line("user", "Never squash merge on this repo.", cwd="/w"))
    reader = claude_code.Reader()
    assert reader.turns(entry) == ["user: Never squash merge on this repo."]
    for flag in ("isMeta", "isCompactSummary", "isSidechain"):
        assert reader.turns({**entry, flag: True}) == []
    command = {
        **entry,
        "message": {"role": "user", "content": "<command-name>/clear</command-name>"},
    }
    assert reader.turns(command) == []
    assert reader.turns({"type": "system", "content": "hook ran"}) == []


def test_claude_code_context_is_the_entries_cwd_and_session(tmp_path):
    path = tmp_path / "s-9.jsonl"
    path.write_text(
        json.dumps({"type": "summary", "summary": "x"})
        + "\n"
        + claude_line("user", "hello", cwd="/home/dev/shop", session="s-9")
    )
    context = claude_code.context(path)
    assert (context.cwd, context.conversation_id) == ("/home/dev/shop", "s-9")


def test_codex_keeps_messages_and_takes_cwd_from_session_meta():
    turns = turns_of(codex, "codex-rollout.jsonl")
    assert "\n\n".join(turns) == codex_chunk()
    joined = "\n".join(turns)
    assert "environment_context" not in joined
    assert "Check the test config" not in joined  # reasoning
    assert "pytest.ini" not in joined  # a function call and its output
    context = codex.context(TRANSCRIPTS / "codex-rollout.jsonl")
    assert (context.cwd, context.conversation_id) == ("/home/dev/api", "r-1")


def test_codex_skips_event_messages_that_repeat_the_response_items():
    echo = {"type": "event_msg", "payload": {"type": "user_message", "message": "hi"}}
    assert codex.Reader().turns(echo) == []


def test_cursor_keeps_text_without_the_query_wrapper():
    assert turns_of(cursor, "cursor-agent-transcript.jsonl") == [
        "user: The mobile build fails after the upgrade. Any idea?",
        "assistant: The new camera library needs `minSdkVersion 24`; the build pins 21 in "
        "`android/build.gradle`.",
        "user: Raise it to 24. We only support Android 7 and later anyway.",
    ]


def test_cursor_resolves_the_workspace_folder_from_its_name(tmp_path):
    workspace = tmp_path / "my_app" / "web-client"
    workspace.mkdir(parents=True)
    name = folder_name(str(workspace))
    assert cursor.workspace_of(name) == workspace
    transcript = tmp_path / ".cursor" / "projects" / name / "agent-transcripts" / "c-1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("")
    context = cursor.context(transcript)
    assert (context.cwd, context.conversation_id) == (str(workspace), "c-1")
    assert cursor.workspace_of(folder_name(str(tmp_path / "gone"))) is None


def test_each_agents_transcripts_are_found_where_it_writes_them(tmp_path):
    files = {
        claude_code: tmp_path / ".claude/projects/-home-dev-shop/s-1.jsonl",
        codex: tmp_path / ".codex/sessions/2026/11/21/rollout-2026-11-21T09-00-00-r-1.jsonl",
        cursor: tmp_path / ".cursor/projects/home-dev-shop/agent-transcripts/c-1/c-1.jsonl",
    }
    for path in files.values():
        path.parent.mkdir(parents=True)
        path.write_text("")
    for adapter, path in files.items():
        assert adapter.transcripts(tmp_path) == [path]
        assert adapter_for(path, tmp_path) is adapter
    assert adapter_for(tmp_path / "notes.jsonl", tmp_path) is None
