"""The judge and the decision rules end to end: each verdict's path, the thresholds, protected
kinds, authority ranks and undo, through the real anthropic SDK against the fake Messages API."""

from __future__ import annotations

import pytest

from memories.hygiene import judge
from memories.hygiene.review import conflict_resolve
from memories.models import ConflictAction, ConflictStatus, Provenance, Resolution
from tests.memories.hygiene.support import fresh, judged, relation, write
from zeromemory.core.actor import Actor


def test_the_request_forces_record_relation_with_the_model_setting(pair, fake_anthropic, settings):
    settings.HYGIENE_MODEL = "claude-judge-test"
    fake_anthropic.script(relation("complementary", 0.6))
    conflict, outcome = judged(*pair)
    [request] = fake_anthropic.requests
    body = request.json
    assert body["model"] == "claude-judge-test"
    assert body["tool_choice"] == {"type": "tool", "name": judge.TOOL_NAME}
    assert pair[0].content in body["messages"][0]["content"]
    assert "<memory_b" in body["messages"][0]["content"]
    assert (outcome, conflict.status, conflict.verdict) == ("cleared", "cleared", "complementary")


def test_a_sure_duplicate_is_merged_into_the_newer_with_its_provenance(pair, fake_anthropic):
    a, b = pair
    fake_anthropic.script(relation("duplicate", 0.93))
    conflict, outcome = judged(a, b)
    a, b = fresh(a, b)
    assert outcome == "resolved" and conflict.status == ConflictStatus.RESOLVED
    assert conflict.resolution == Resolution.MERGE and conflict.resolved_automatically
    # Same rank: the older is superseded, and its provenance joins the newer.
    assert (a.valid, a.superseded_by_id, b.valid) == (False, b.pk, True)
    rows = Provenance.objects.filter(memory=b)
    assert rows.count() == 2 and rows.filter(absorbed=True, written_text=a.content).exists()
    [action] = ConflictAction.objects.filter(conflict=conflict)
    assert action.automatic and (action.retired_id, action.kept_id) == (a.pk, b.pk)


def test_undo_restores_the_memory_and_its_provenance(pair, fake_anthropic, tenancy):
    a, b = pair
    fake_anthropic.script(relation("duplicate", 0.99))
    conflict, _ = judged(a, b)
    conflict = conflict_resolve(actor=Actor(user=tenancy.owner), conflict=conflict, action="undo")
    a, b = fresh(a, b)
    assert a.valid and b.valid
    assert Provenance.objects.filter(memory=a, absorbed=False).count() == 1
    assert Provenance.objects.filter(memory=b).count() == 1
    assert conflict.status == ConflictStatus.OPEN and conflict.resolution == ""
    [action] = conflict.actions.all()
    assert action.undone_at is not None and action.undone_by == tenancy.owner


@pytest.mark.parametrize(
    ("verdict", "confidence", "status"),
    [
        ("duplicate", 0.89, "open"),
        ("duplicate", 0.90, "resolved"),
        ("a_supersedes_b", 0.94, "open"),
        ("a_supersedes_b", 0.95, "resolved"),
        ("b_supersedes_a", 0.99, "resolved"),
        ("contradiction", 1.0, "open"),
        ("complementary", 0.99, "cleared"),
        ("unrelated", 0.4, "cleared"),
    ],
)
def test_each_verdict_and_threshold(pair, fake_anthropic, verdict, confidence, status):
    fake_anthropic.script(relation(verdict, confidence))
    conflict, _ = judged(*pair)
    a, b = fresh(*pair)
    assert conflict.status == status
    assert (conflict.verdict, conflict.confidence) == (verdict, confidence)
    if status == "resolved" and verdict != "duplicate":
        retired = b if verdict == "a_supersedes_b" else a
        kept = a if retired is b else b
        assert (retired.valid, retired.superseded_by_id, kept.valid) == (False, kept.pk, True)
    elif status != "resolved":
        assert a.valid and b.valid


@pytest.mark.parametrize("kind", ["decision", "convention", "gotcha", "preference"])
@pytest.mark.parametrize("author", ["human", "agent"])
def test_protected_kinds_written_at_rank_one_or_more_are_never_retired(
    tenancy, kinds_seeded, fake_anthropic, kind, author
):
    a = write(
        tenancy.owner,
        "Releases are cut from the main branch.",
        tenancy.team,
        kind=kind,
        author=author,
    )
    b = write(
        tenancy.owner, "We cut every release from main.", tenancy.team, kind=kind, author=author
    )
    fake_anthropic.script(relation("duplicate", 0.99))
    conflict, _ = judged(a, b)
    assert conflict.status == ConflictStatus.OPEN
    assert all(memory.valid for memory in fresh(a, b))


def test_a_protected_kind_from_capture_is_merged(tenancy, kinds_seeded, fake_anthropic):
    a = write(
        tenancy.owner,
        "Releases are cut from the main branch.",
        tenancy.team,
        kind="decision",
        author="capture",
    )
    b = write(
        tenancy.owner,
        "We cut every release from main.",
        tenancy.team,
        kind="decision",
        author="capture",
    )
    fake_anthropic.script(relation("duplicate", 0.99))
    conflict, _ = judged(a, b)
    assert conflict.status == ConflictStatus.RESOLVED
    assert not fresh(a)[0].valid


def test_of_two_duplicates_the_lower_rank_is_superseded(tenancy, kinds_seeded, fake_anthropic):
    person = write(tenancy.owner, "The CI cache lives in the ci-cache bucket.", tenancy.team)
    captured = write(
        tenancy.owner, "CI caches are kept in the ci-cache bucket.", tenancy.team, author="capture"
    )
    fake_anthropic.script(relation("duplicate", 0.97))
    judged(person, captured)
    person, captured = fresh(person, captured)
    assert person.valid and not captured.valid and captured.superseded_by_id == person.pk


def test_a_supersession_never_retires_a_higher_rank_automatically(
    tenancy, kinds_seeded, fake_anthropic
):
    person = write(tenancy.owner, "The API timeout is 30 seconds.", tenancy.team)
    agent = write(tenancy.owner, "The API timeout is now 45 seconds.", tenancy.team, author="agent")
    fake_anthropic.script(relation("b_supersedes_a", 0.99))
    conflict, _ = judged(person, agent)
    assert conflict.status == ConflictStatus.OPEN
    assert all(memory.valid for memory in fresh(person, agent))


def test_a_pair_with_a_memory_gone_meanwhile_needs_no_call(pair, fake_anthropic, tenancy):
    from memories.services.lifecycle import memory_forget

    memory_forget(actor=Actor(user=tenancy.owner), memory=pair[0], reason="Old.")
    conflict, outcome = judged(*pair)
    assert (outcome, conflict.status) == ("cleared", "cleared")
    assert fake_anthropic.requests == []
