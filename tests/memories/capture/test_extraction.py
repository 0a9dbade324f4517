"""Extraction through the real anthropic SDK against the fake Messages API: the gates, the
provenance, canonical English, secrets never sent, faults and retries, no key, the budget."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from memories.capture import service, tasks
from memories.models import ChunkStatus, Memory, Provenance
from tests.fakes.anthropic_api import (
    delay,
    malformed_tool_input,
    memories_answer,
    status,
    tool_answer,
)
from tests.memories.capture.support import (
    DECISION,
    EVIDENCE,
    candidate,
    claude_code_chunk,
    codex_chunk,
    ingest,
    run,
)


def test_a_kept_candidate_becomes_a_memory_with_the_chunk_in_provenance(
    tenancy, writer, fake_anthropic, extract
):
    fake_anthropic.script(memories_answer([DECISION]))
    chunk = extract(conversation_id="s-1", source_path="/home/dev/shop")
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.EXTRACTED and chunk.kept == 1 and chunk.tokens_used > 0
    [memory] = Memory.objects.all()
    assert memory.public_id in chunk.memory_ids
    assert (memory.kind_id, memory.author_kind) == ("decision", "capture")
    [row] = Provenance.objects.filter(memory=memory)
    assert (row.source_kind, row.chunk_id, row.verbatim) == ("extraction", chunk.id, EVIDENCE)
    assert (row.client_name, row.conversation_id, row.source_path) == (
        "claude-code",
        "s-1",
        "/home/dev/shop",
    )
    detail = writer.get(f"/api/v1/ingest/{chunk.public_id}").json()
    assert detail["status"] == "extracted" and detail["memories"] == [memory.public_id]
    [request] = fake_anthropic.requests
    body = request.json
    assert body["tool_choice"] == {"type": "tool", "name": "record_memories"}
    assert "conversation between a developer and an AI coding agent" in body["system"]


@pytest.mark.parametrize(
    ("proposed", "reason"),
    [
        (candidate("Something vague is true.", "decision", 0.5, EVIDENCE), "low_confidence"),
        (
            candidate("Stripe retries for three days.", "fact", 0.8, "Stripe retries"),
            "low_confidence",
        ),
        (candidate("Invented.", "decision", 0.99, "a sentence nobody said"), "evidence_not_found"),
        (candidate("Move the call to the queue.", "task", 0.99, EVIDENCE), "kind"),
        (candidate("Unknown kind.", "gossip", 0.99, EVIDENCE), "kind"),
        ({"content": "no kind", "confidence": 0.9}, "malformed"),
    ],
)
def test_each_gate_drops_with_its_reason(fake_anthropic, extract, proposed, reason):
    fake_anthropic.script(memories_answer([proposed]))
    chunk = extract()
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.EXTRACTED
    assert (chunk.kept, chunk.dropped) == (0, {reason: 1})
    assert not Memory.objects.exists()


def test_a_fact_from_a_document_needs_only_the_general_floor(fake_anthropic, extract):
    fake_anthropic.script(
        memories_answer(
            [
                candidate(
                    "Stripe retries webhooks for three days.",
                    "fact",
                    0.8,
                    "Stripe retries for up to three days",
                )
            ]
        )
    )
    chunk = extract(source_kind="document")
    chunk.refresh_from_db()
    assert chunk.kept == 1


def test_at_most_ten_per_chunk_the_most_confident_first(fake_anthropic, extract):
    words = EVIDENCE.split()
    proposed = [
        candidate(
            f"Rule number {n}: never call Stripe inside a request handler.",
            "convention",
            0.7 + n / 100,
            " ".join(words[: 5 + n % 4]),
        )
        for n in range(12)
    ]
    fake_anthropic.script(memories_answer(proposed))
    chunk = extract()
    chunk.refresh_from_db()
    assert (chunk.kept, chunk.dropped) == (10, {"over_cap": 2})
    kept = set(Memory.objects.values_list("content", flat=True))
    assert "Rule number 0: never call Stripe inside a request handler." not in kept
    assert "Rule number 11: never call Stripe inside a request handler." in kept


def test_evidence_is_found_across_line_breaks_and_spacing(fake_anthropic, extract):
    text = "user: From now on we\n   never call Stripe inside\n a request handler, ever."
    decision = dict(DECISION, content="The shop never calls Stripe inside a request handler.")
    fake_anthropic.script(memories_answer([decision]))
    chunk = extract(text)
    chunk.refresh_from_db()
    assert chunk.kept == 1


def test_a_candidate_in_another_language_is_canonicalized_after(fake_anthropic, extract):
    german = candidate(
        "Der Shop ruft Stripe nie innerhalb eines Request-Handlers auf; Webhooks laufen über "
        "die Warteschlange `billing_events`.",
        "decision",
        0.95,
        EVIDENCE,
    )
    fake_anthropic.script(
        memories_answer([german]),
        # The memory is stored as written, then translated by canonicalization.
        tool_answer(DECISION["content"]),
    )
    extract()
    [memory] = Memory.objects.all()
    assert memory.content_lang == "de" and memory.translation_status == "done"
    assert memory.content == DECISION["content"]
    assert "Warteschlange" in memory.content_original


def test_a_secret_is_redacted_before_the_call(fake_anthropic, extract):
    secret = "sk-ant-" + "x1Y2z3W4" * 4
    text = claude_code_chunk() + f"\n\nuser: the key is {secret}, keep it safe."
    fake_anthropic.script(memories_answer([]))
    extract(text)
    [request] = fake_anthropic.requests
    assert secret not in request.body.decode()
    assert "[redacted: an Anthropic API key]" in json.dumps(request.json)


def test_a_chunk_with_too_little_prose_is_skipped_without_a_call(fake_anthropic, extract):
    chunk = extract("user: `make test` && `git push` src/app.py")
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.SKIPPED
    assert fake_anthropic.requests == []


def test_a_duplicate_chunk_is_not_extracted_twice(writer, fake_anthropic, extract):
    fake_anthropic.script(memories_answer([DECISION]))
    text = claude_code_chunk()
    extract(text)
    again = ingest(writer, text)
    assert again.status_code == 200 and again.json()["chunk"]["duplicate"] is True
    assert len(fake_anthropic.requests) == 1


@pytest.mark.parametrize(
    "fault",
    [
        status(429, headers={"retry-after": "120"}),
        status(500),
        malformed_tool_input({"memories": "not a list"}),
        delay(3),
    ],
    ids=["429", "500", "malformed", "timeout"],
)
def test_a_fault_leaves_the_chunk_pending_with_backoff(fault, fake_anthropic, settings, extract):
    settings.EXTRACTOR_TIMEOUT_SECONDS = 1
    fake_anthropic.script(fault)
    before = timezone.now()
    chunk = extract()
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.PENDING, 1)
    assert chunk.error and chunk.next_at > before and chunk.claim == ""
    assert not Memory.objects.exists()
    assert tasks.sweep_chunks() == 0  # not due before the backoff is over


def test_a_refusal_fails_at_once_and_the_admin_retry_brings_it_back(
    fake_anthropic, extract, sync_tasks
):
    fake_anthropic.script(status(401), memories_answer([DECISION]))
    chunk = extract()
    chunk.refresh_from_db()
    assert (chunk.status, chunk.attempts) == (ChunkStatus.FAILED, 1) and "401" in chunk.error
    claim = service.chunk_retry(chunk=chunk)
    assert tasks.extract(chunk.id, claim) == "extracted"
    chunk.refresh_from_db()
    assert chunk.kept == 1


def test_without_a_key_chunks_wait_then_extract_once_a_key_is_set(
    writer, fake_anthropic, settings, sync_tasks, django_capture_on_commit_callbacks
):
    settings.ANTHROPIC_API_KEY = ""
    chunk = run(writer, claude_code_chunk(), django_capture_on_commit_callbacks)
    assert chunk.status == ChunkStatus.WAITING_FOR_KEY
    assert tasks.sweep_chunks() == 0 and fake_anthropic.requests == []
    settings.ANTHROPIC_API_KEY = "test-key"
    fake_anthropic.script(memories_answer([DECISION]))
    assert tasks.sweep_chunks() == 1
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.EXTRACTED and chunk.kept == 1


def test_the_daily_budget_defers_the_rest_to_tomorrow(fake_anthropic, settings, extract):
    settings.EXTRACTION_DAILY_TOKENS = 1
    fake_anthropic.script(memories_answer([DECISION]))
    first = extract()
    first.refresh_from_db()
    assert first.status == ChunkStatus.EXTRACTED
    second = extract("user: We deploy on Tuesdays and Thursdays, never on Fridays, by agreement.")
    second.refresh_from_db()
    assert second.status == ChunkStatus.DEFERRED and "budget" in second.error
    assert second.next_at.date() > timezone.now().date()
    assert len(fake_anthropic.requests) == 1


def test_chunk_text_is_purged_after_the_retention(fake_anthropic, settings, extract):
    fake_anthropic.script(memories_answer([DECISION]))
    chunk = extract()
    later = timezone.now() + timezone.timedelta(days=settings.CHUNK_RETENTION_DAYS + 1)
    assert service.purge_chunk_contents(now=later) == 1
    chunk.refresh_from_db()
    assert chunk.content == "" and chunk.chunk_hash and chunk.memory_ids


def test_a_codex_transcript_yields_its_decision_with_the_evidence(fake_anthropic, extract):
    text = codex_chunk()
    assert "function_call" not in text and "Check the test config" not in text
    evidence = "Keep the test Redis on database 1 always"
    fake_anthropic.script(
        memories_answer(
            [
                candidate(
                    "The API's tests use Redis database 1, never database 0.",
                    "convention",
                    0.9,
                    evidence,
                )
            ]
        )
    )
    chunk = extract(text, client="codex", source_path="/home/dev/api")
    chunk.refresh_from_db()
    assert chunk.kept == 1
    [memory] = Memory.objects.all()
    assert Provenance.objects.get(memory=memory).verbatim == evidence
