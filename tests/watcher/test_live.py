"""The whole path: a Claude Code session written line by line while `zm-watch run` follows it
reaches the server as chunks, and the chunks as memories (extracted through the real anthropic
SDK against the fake Messages API), within 70 s of the last line. The idle flush is 2 s here;
the product's default is 60 s."""

from __future__ import annotations

import re
import time

from memories.models import ChunkStatus, Memory
from tests.fakes.anthropic_api import memories_answer_from
from tests.memories.capture.support import candidate
from tests.served import wait_for
from tests.watcher.support import said, stored_chunks, write_turns

TURNS = 12
DELIVERY_BOUND = 70  # seconds after the last line


def decisions_in(request_json) -> list[dict]:
    """One decision per user turn of the chunk, its evidence the turn's opening words."""
    text = request_json["messages"][0]["content"]
    return [
        candidate(
            f"Turn {number} of the shop's session decided to keep the billing queue.",
            "decision",
            0.95,
            f"Turn {number}: we keep the billing queue because retries pile up",
        )
        for number in re.findall(r"^user: Turn (\d+):", text, re.M)
    ]


def test_a_session_written_line_by_line_becomes_chunks_and_memories(
    home, watch, gate, fake_anthropic, sync_tasks
):
    fake_anthropic.default = memories_answer_from(decisions_in)
    watcher = watch(idle_flush=2)
    watcher.start()
    write_turns(home, range(1, TURNS + 1), pause=0.3)
    last_line_at = time.monotonic()

    def delivered_and_extracted() -> bool:
        chunks = stored_chunks()  # one read: a chunk arriving meanwhile is seen next time
        text = "\n".join(chunk.content for chunk in chunks)
        return (
            all(text.count(said(n)) == 1 for n in range(1, TURNS + 1))
            and all(chunk.status == ChunkStatus.EXTRACTED for chunk in chunks)
            and Memory.objects.count() >= TURNS // 2
        )

    wait_for(delivered_and_extracted, timeout=DELIVERY_BOUND, what="chunks and memories")
    assert time.monotonic() - last_line_at < DELIVERY_BOUND
    chunks = stored_chunks()
    assert len(chunks) >= 3  # cut by size (1,000 characters here), then flushed when idle
    for number in range(1, TURNS + 1, 2):
        memory = Memory.objects.get(content__startswith=f"Turn {number} of the shop's")
        assert memory.author_kind == "capture"
    assert len(fake_anthropic.requests) == len(chunks)
