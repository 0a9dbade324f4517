"""Claude Code: every word the person typed or chose is kept, marked by where it came from
(queued while the agent worked, an answer, the feedback on a rejected tool call, an approved
plan, a slash command's arguments), and what no one typed is left out (notices,
interruptions, `!` shell mode and command output, synthetic messages, API errors)."""

from __future__ import annotations

from zmwatch.adapters import claude_code

from tests.memories.capture.support import TRANSCRIPTS
from tests.watcher.reading import read_entries, read_turns

PLAN = (
    "# Plan\n1. Move the Stripe call to the billing_events worker\n"
    "2. Keep the handler to enqueueing"
)


def test_a_session_keeps_the_persons_words_and_leaves_out_the_noise():
    assert read_turns(claude_code, TRANSCRIPTS / "claude-code-words.jsonl") == [
        "user (/review): focus on billing/webhooks.py; we never log card numbers",
        "assistant: I will read the webhook handler first.",
        "user (answer): Which queue should the webhooks use? → billing_events "
        "(notes: one queue per provider later)",
        "user (rejected the tool call): no connection pooling here, keep it simple",
        "user (queued): also keep the retry limit at five",  # 2.1.3x: only the enqueue says it
        "user (queued): and name the worker billing-worker",  # enqueue and attachment: once
        "user (queued): the worker runs two processes",  # only the attachment says it
        f"assistant (plan for approval): {PLAN}",
        "user (approved the plan): the plan above",
        "user (approved the plan): # Second plan\nDrop the legacy webhook endpoint",
        "user: go",
        "assistant: Moved the Stripe call; the handler only enqueues now.",
        "user: go",  # typed twice, kept twice
        "user: Deploy after the tests pass.",  # the reminder appended to it left out
    ]


def test_no_entry_of_the_session_is_of_an_unknown_kind():
    assert None not in read_entries(claude_code, TRANSCRIPTS / "claude-code-words.jsonl")


def user(content, **extra) -> dict:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def test_command_output_and_shell_mode_are_never_the_users_words():
    reader = claude_code.Reader()
    for content in (
        "<bash-input>gh auth token</bash-input>",
        "<bash-stdout>gho_16C7e42F292c6912E7710c838347Ae178B4a</bash-stdout>",
        "<local-command-stdout>Kept model as Default</local-command-stdout>",
        "<command-name>/model</command-name>\n<command-args></command-args>",
        "<ide_opened_file>The user opened billing/webhooks.py.</ide_opened_file>",
        "<task-notification>\n<status>completed</status>\n</task-notification>\nRead it.",
    ):
        assert reader.turns(user(content)) == [], content
    queued = {"type": "queue-operation", "operation": "enqueue", "content": "/mcp"}
    assert reader.turns(queued) == []  # a bare command, queued: no words


def test_a_queued_prompt_submitted_as_a_prompt_is_sent_once():
    """In SDK sessions every prompt passes through the queue, then arrives as a user entry."""
    reader = claude_code.Reader()
    enqueue = {"type": "queue-operation", "operation": "enqueue", "content": "ship it"}
    assert reader.turns(enqueue) == ["user (queued): ship it"]
    assert reader.turns({"type": "queue-operation", "operation": "dequeue"}) == []
    assert reader.turns(user("ship it")) == []
    assert reader.turns(user("ship it")) == ["user: ship it"]  # typed again: kept


def test_a_queued_message_absorbed_after_the_agent_spoke_is_sent_once():
    reader = claude_code.Reader()
    enqueue = {"type": "queue-operation", "operation": "enqueue", "content": "use staging"}
    said = {"type": "assistant", "message": {"role": "assistant", "content": "Running it."}}
    attachment = {
        "type": "attachment",
        "attachment": {"type": "queued_command", "prompt": "use staging", "commandMode": "prompt"},
    }
    assert reader.turns(enqueue) == ["user (queued): use staging"]
    assert reader.turns(said) == ["assistant: Running it."]
    assert reader.turns(attachment) == []
    assert reader.turns(user("use staging")) == ["user: use staging"]  # typed after: kept


def test_a_rejected_plan_keeps_the_feedback_and_approves_nothing():
    reader = claude_code.Reader()
    proposed = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "p", "name": "ExitPlanMode", "input": {"plan": PLAN}}
            ],
        },
    }
    assert reader.turns(proposed) == [f"assistant (plan for approval): {PLAN}"]
    rejected = user(
        [
            {
                "type": "tool_result",
                "tool_use_id": "p",
                "is_error": True,
                "content": "The user doesn't want to proceed with this tool use. To tell you "
                "how to proceed, the user said:\nsplit step 1 in two",
            }
        ]
    )
    assert reader.turns(rejected) == ["user (rejected the tool call): split step 1 in two"]


def test_side_chains_and_subagent_files_are_left_out(tmp_path):
    entry = user("Find the callers of charge().", isSidechain=True)
    assert claude_code.Reader().turns(entry) == []
    side_file = tmp_path / "s-1" / "subagents" / "agent-a1.jsonl"
    assert claude_code.reader(side_file).turns(user("Find the callers of charge().")) == []


def test_an_entry_of_an_unknown_kind_is_told_apart_from_one_with_nothing_to_send():
    reader = claude_code.Reader()
    assert reader.turns({"type": "progress", "data": {}}) == []
    assert reader.turns({"type": "conversation-turn-v3", "text": "hello"}) is None
    assert reader.turns({"type": "user", "message": "hello"}) is None
