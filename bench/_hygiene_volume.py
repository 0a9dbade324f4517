"""bench/hygiene.py's judge volume: judge calls per 1,000 new memories on chat-like data, before
(one call per candidate pair) and after (no call for pairs of the same text once normalized,
several pairs of one scope a call), counted at the fake Messages API."""

from __future__ import annotations

import time


def every_pair(verdict: dict):
    """A fake-API step for any judge call: `verdict` for each numbered pair of the request."""
    from tests.fakes.anthropic_api import Step, malformed_tool_input

    def answer(request, stopping):
        pairs = request.json["messages"][0]["content"].count("<pair number=")
        entries = [{"pair": number, **verdict} for number in range(1, pairs + 1)]
        return malformed_tool_input({"relations": entries}).answer(request, stopping)

    return Step("every pair", answer)


def judge_volume(fake, turns: int, scopes: int) -> None:
    """Judge calls per 1,000 new memories on chat-like data: `turns` chat turns (bench/_chat.py)
    in `scopes` scopes, plus a batch of near-identical short facts in one more scope, embedded
    for real and inserted in bulk, scanned, then judged through the sweeper and the judge's
    tasks (run inline) against the fake API. Before: one call per pair, as the judge made them.
    After: what the fake API received."""
    from _chat import conversations, short_memory
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django_q.conf import Conf

    from memories.canonical.content import content_hash
    from memories.embeddings import embed_contents
    from memories.hygiene import scan, tasks
    from memories.hygiene.judge import normalized
    from memories.models import Conflict, ConflictStatus, Memory
    from scopes.services import scope_create
    from zeromemory.core.actor import Actor

    settings.ANTHROPIC_API_KEY = ""  # the scan queues; the judge waits until the key below
    user = get_user_model().objects.create_user("volume", password="bench-password-1")
    texts_by_scope, _ = conversations(turns, scopes)
    facts = max(1, turns // 5)
    groups = [[turn.content for turn in group] for group in texts_by_scope]
    groups.append([short_memory(n) for n in range(facts)])
    started = time.perf_counter()
    written = 0
    for number, texts in enumerate(groups):
        scope = scope_create(
            actor=Actor(user=user), name=f"V{number}", slug=f"v{number}", kind="team"
        )
        unique = list(dict.fromkeys(texts))
        for start in range(0, len(unique), 256):
            batch = unique[start : start + 256]
            vectors = embed_contents(batch)
            Memory.objects.bulk_create(
                [Memory(scope=scope, kind_id="fact", content=text, content_hash=content_hash(text),
                        author_kind="capture", embedding=embedded.vector)
                 for text, embedded in zip(batch, vectors, strict=True)]
            )  # fmt: skip
        written += len(unique)
    print(
        f"judge volume: {written:,} new memories ({turns:,} chat turns in {scopes} scopes and "
        f"{facts:,} near-identical short facts in one) embedded and stored in "
        f"{time.perf_counter() - started:.0f} s"
    )
    record = scan.hygiene_scan()
    pairs = list(
        Conflict.objects.select_related("memory_a", "memory_b").filter(memory_b__isnull=False)
    )
    same = sum(normalized(c.memory_a.content) == normalized(c.memory_b.content) for c in pairs)
    print(
        f"  scan: {record.pairs_found:,} candidate pairs; before: one judge call each = "
        f"{record.pairs_found / written * 1000:,.0f} calls per 1,000 new memories"
    )
    settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL = "bench-key", fake.url
    Conf.SYNC = True
    fake.default = every_pair({"relation": "unrelated", "confidence": 0.9, "rationale": "x"})
    before_requests = len(fake.requests)
    started = time.perf_counter()
    while tasks.sweep_conflicts():
        pass
    calls = len(fake.requests) - before_requests
    left = Conflict.objects.filter(
        status__in=[ConflictStatus.PENDING, ConflictStatus.WAITING_FOR_KEY]
    ).count()
    print(
        f"  after: {calls:,} judge calls ({settings.HYGIENE_PAIRS_PER_CALL} pairs of one scope a "
        f"call, {same:,} pairs of the same text once normalized judged without a call) = "
        f"{calls / written * 1000:,.1f} calls per 1,000 new memories; {left} pairs left; "
        f"{time.perf_counter() - started:.0f} s"
    )
    Conf.SYNC = False
