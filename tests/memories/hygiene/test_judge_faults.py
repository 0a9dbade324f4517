"""The judge's faults: retries with backoff under a lease, failures that another attempt cannot
change, malformed answers; nothing is resolved by a failed call."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memories.hygiene import service
from memories.models import ConflictStatus
from tests.fakes.anthropic_api import delay, malformed_tool_input, status, text_only
from tests.memories.hygiene.support import judged, queued_pair, relation, relations


@pytest.mark.parametrize(
    "step",
    [
        status(429, headers={"retry-after": "120"}),
        status(500),
        status(529),
        text_only("They look the same to me."),
        relations(("twins", 0.9)),
        relations(("duplicate", 1.7)),
        relations(("duplicate", True)),
        malformed_tool_input({"relation": "duplicate", "confidence": 0.9, "rationale": "x"}),
        malformed_tool_input(
            {"relations": [{"pair": 2, "relation": "duplicate", "confidence": 0.9}]}
        ),
        delay(5),
    ],
    ids=[
        "429",
        "500",
        "529",
        "text",
        "relation",
        "confidence",
        "bool",
        "no-list",
        "no-entry",
        "timeout",
    ],
)
def test_a_fault_is_retried_later_and_resolves_nothing(pair, fake_anthropic, settings, step):
    settings.HYGIENE_TIMEOUT_SECONDS = 1
    fake_anthropic.script(step)
    conflict, outcome = judged(*pair)
    assert outcome == "retry"
    assert conflict.status == ConflictStatus.PENDING and conflict.attempts == 1
    assert conflict.next_at > timezone.now() and conflict.error
    assert all(memory.valid for memory in pair)
    assert service.due_conflicts() == []  # backing off


def test_a_refused_key_fails_at_once(pair, fake_anthropic):
    fake_anthropic.script(status(401))
    conflict, outcome = judged(*pair)
    assert (outcome, conflict.status) == ("failed", ConflictStatus.FAILED)
    service.conflict_retry(conflict=conflict)
    fake_anthropic.script(relation("unrelated", 0.9))
    [(conflict_id, claim)] = service.due_conflicts()
    assert service.conflict_judge(conflict_id=conflict_id, claim=claim) == "cleared"


def test_the_last_attempt_fails_the_pair(pair, fake_anthropic, settings):
    settings.HYGIENE_MAX_ATTEMPTS = 2
    fake_anthropic.script(status(500), status(500))
    conflict, claim = queued_pair(*pair)
    assert service.conflict_judge(conflict_id=conflict.id, claim=claim) == "retry"
    conflict.refresh_from_db()
    conflict.next_at = None
    conflict.save(update_fields=["next_at"])
    [(conflict_id, claim)] = service.due_conflicts()
    assert service.conflict_judge(conflict_id=conflict_id, claim=claim) == "failed"


def test_a_stale_or_redelivered_claim_does_nothing(pair, fake_anthropic):
    conflict, claim = queued_pair(*pair)
    fake_anthropic.script(relation("unrelated", 0.9))
    assert service.conflict_judge(conflict_id=conflict.id, claim=claim) == "cleared"
    assert service.conflict_judge(conflict_id=conflict.id, claim=claim) == "not-claimed"
    assert len(fake_anthropic.requests) == 1


def test_the_sweeper_takes_over_a_pair_whose_lease_ran_out(pair, fake_anthropic):
    conflict, _ = queued_pair(*pair)
    assert service.due_conflicts() == []  # leased
    conflict.lease_until = timezone.now()
    conflict.save(update_fields=["lease_until"])
    [(conflict_id, claim)] = service.due_conflicts()
    fake_anthropic.script(relation("contradiction", 0.7))
    assert service.conflict_judge(conflict_id=conflict_id, claim=claim) == "open"
