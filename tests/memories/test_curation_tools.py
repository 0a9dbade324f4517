"""move_memories, share, promote_rule, reject_rule, import_memory and benchmark_memory, through
the MCP tools (the SDK's client, in process) and their REST routes."""

from __future__ import annotations

import base64

import pytest

from memories.models import ActivityLog, Memory, Provenance, Rule, RuleStatus, ValidityPeriod
from memories.services.remember import RememberInput, memory_remember
from tests.factories import make_token
from tests.mcp_inproc import call_tool, structured
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.usefixtures("kinds_seeded")


def remember(user, content: str, scope: str | None = None, **extra) -> Memory:
    request = RememberInput(content=content, kind="decision", scope=scope, **extra)
    return memory_remember(actor=Actor(user=user), request=request).memory


def personal(user) -> str:
    return user.owned_scopes.get(kind="personal").public_id


def ok(secret: str, tool: str, **arguments) -> dict:
    result = call_tool(secret, tool, arguments)
    answer = structured(result)
    assert not result.is_error, answer
    return answer


def refused(secret: str, tool: str, **arguments) -> dict:
    result = call_tool(secret, tool, arguments)
    answer = structured(result)
    assert result.is_error, answer
    return answer["error"]


def events(secret: str, memory_id: str) -> list[dict]:
    return ok(secret, "history", memory_id=memory_id)["events"]


def test_a_move_writes_the_memory_in_the_target_and_the_old_place_says_where_it_went(tenancy):
    team = tenancy.team.public_id
    old = remember(
        tenancy.owner,
        "Feature flags live in flags.yaml, not in the database.",
        verbatim="flags en flags.yaml",
        conversation_id="conv-7",
    )
    secret = make_token(tenancy.owner)

    answer = ok(secret, "move_memories", memory_ids=[old.public_id], to_scope=team, confirm=True)

    [moved] = answer["results"]
    new_id = moved["memory"]["id"]
    assert answer["to_scope"] == team and moved["deduplicated"] is False
    assert moved["memory"]["scope"] == team and moved["memory"]["state"] == "valid"
    assert moved["original"]["state"] == "forgotten"
    assert new_id in moved["original"]["forgotten_reason"]
    assert team in moved["original"]["forgotten_reason"]
    new = Memory.objects.get(public_id=new_id)
    old.refresh_from_db()
    # Validity travels: written when the original was, its period carried and still open.
    assert new.created_at == old.created_at and new.valid_from == old.valid_from
    assert list(ValidityPeriod.objects.filter(memory=new).values_list("valid_from", "valid_until"))
    assert ValidityPeriod.objects.get(memory=old).replaced_by_id == new.pk
    # Provenance travels, and one row by the mover points back.
    rows = list(Provenance.objects.filter(memory=new).order_by("id"))
    assert rows[0].verbatim == "flags en flags.yaml" and rows[0].conversation_id == "conv-7"
    assert rows[-1].claims == {
        "moved_from": {"memory": old.public_id, "scope": personal(tenancy.owner)}
    }
    assert rows[-1].created_by == tenancy.owner
    # History on both shows the move.
    moved_event = [e for e in events(secret, old.public_id) if e["event"] == "moved"]
    assert moved_event and moved_event[0]["memory"] == new_id
    arrived = [e for e in events(secret, new_id) if e["event"] == "moved_here"]
    assert arrived and arrived[0]["memory"] == old.public_id
    # Recall finds it in the team, and no longer in the personal scope.
    hits = ok(secret, "recall", query="where do feature flags live", scopes=[team])["results"]
    assert [hit["id"] for hit in hits][:1] == [new_id]
    mine = ok(secret, "recall", query="feature flags", scopes=[personal(tenancy.owner)])
    assert old.public_id not in [hit["id"] for hit in mine["results"]]
    # Nothing was lost: restore brings the original back in its place.
    assert ok(secret, "restore", memory_id=old.public_id)["state"] == "valid"


def test_a_move_needs_confirm_and_moves_all_or_nothing(tenancy):
    team = tenancy.team.public_id
    mine = remember(tenancy.owner, "The release train leaves on Thursdays.")
    foreign = remember(tenancy.outsider, "The outsider keeps notes in a shoebox.")
    secret = make_token(tenancy.owner)

    error = refused(secret, "move_memories", memory_ids=[mine.public_id], to_scope=team)
    assert error["code"] == "validation_failed" and "confirm" in error["details"]
    ids = [mine.public_id, foreign.public_id]
    error = refused(secret, "move_memories", memory_ids=ids, to_scope=team, confirm=True)
    assert error["code"] == "not_found" and "memory_ids" in error["details"]
    reader = make_token(tenancy.reader)
    theirs = remember(tenancy.reader, "The reader's own note on lint.")
    error = refused(
        reader, "move_memories", memory_ids=[theirs.public_id], to_scope=team, confirm=True
    )
    assert error["code"] == "forbidden"

    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.valid and theirs.valid
    assert not Memory.objects.filter(scope=tenancy.team).exists()


def test_a_move_within_its_own_scope_or_of_a_forgotten_memory_is_refused(tenancy):
    team = tenancy.team.public_id
    there = remember(tenancy.owner, "Queues drain before deploys.", scope=team)
    gone = remember(tenancy.owner, "The old queue was RabbitMQ.")
    secret = make_token(tenancy.owner)
    ok(secret, "forget", memory_id=gone.public_id, reason="Replaced.")

    error = refused(
        secret, "move_memories", memory_ids=[there.public_id], to_scope=team, confirm=True
    )
    assert error["code"] == "validation_failed" and "to_scope" in error["details"]
    error = refused(
        secret, "move_memories", memory_ids=[gone.public_id], to_scope=team, confirm=True
    )
    assert error["code"] == "conflict" and "memory_ids" in error["details"]
    assert Memory.objects.filter(scope=tenancy.team).count() == 1


def test_a_move_into_a_scope_holding_the_text_joins_that_memory(tenancy):
    team = tenancy.team.public_id
    held = remember(tenancy.owner, "Backups run nightly at 02:00 UTC.", scope=team)
    mine = remember(tenancy.owner, "Backups run nightly at 02:00 UTC.")
    secret = make_token(tenancy.owner)

    answer = ok(secret, "move_memories", memory_ids=[mine.public_id], to_scope=team, confirm=True)

    [moved] = answer["results"]
    assert moved["deduplicated"] is True and moved["memory"]["id"] == held.public_id
    # Its own row and the mover's pointing back: an absorbed write carries no copies, so
    # moving and sharing the same text back and forth never multiplies rows.
    assert Provenance.objects.filter(memory=held).count() == 2
    assert Memory.objects.filter(scope=tenancy.team).count() == 1


def test_share_copies_a_readable_memory_and_leaves_the_original_as_it_was(tenancy):
    team = tenancy.team.public_id
    original = remember(tenancy.owner, "Staging deploys need the VPN.", scope=team)
    before = Memory.objects.filter(pk=original.pk).values().get()
    reader = make_token(tenancy.reader)

    answer = ok(reader, "share", memory_id=original.public_id, to_scope=personal(tenancy.reader))

    copy = Memory.objects.get(public_id=answer["memory"]["id"])
    assert copy.scope.public_id == personal(tenancy.reader) and copy.valid
    assert answer["original"]["state"] == "valid"
    assert Memory.objects.filter(pk=original.pk).values().get() == before
    # Only the sharer's row pointing back: the team's provenance (who wrote it, from which
    # file and conversation) stays with the original.
    [row] = Provenance.objects.filter(memory=copy)
    assert row.claims == {"shared_from": {"memory": original.public_id, "scope": team}}
    for _ in range(3):
        again = ok(reader, "share", memory_id=original.public_id, to_scope=personal(tenancy.reader))
        assert again["deduplicated"] is True
    assert Provenance.objects.filter(memory=copy).count() == 4
    assert row.created_by == tenancy.reader
    assert copy.author_kind == "agent" and copy.created_by == tenancy.reader
    shared = [e for e in events(reader, copy.public_id) if e["event"] == "shared_here"]
    assert shared and shared[0]["memory"] == original.public_id
    error = refused(reader, "share", memory_id=copy.public_id, to_scope=team)
    assert error["code"] == "forbidden"
    error = refused(
        make_token(tenancy.outsider),
        "share",
        memory_id=original.public_id,
        to_scope=personal(tenancy.outsider),
    )
    assert error["code"] == "not_found" and "memory_id" in error["details"]


def test_promote_rule_nominates_and_only_an_admin_rejects(tenancy):
    team = tenancy.team.public_id
    memory = remember(tenancy.writer, "Every migration ships with its rollback.", scope=team)
    writer, owner = make_token(tenancy.writer), make_token(tenancy.owner)

    rule = ok(writer, "promote_rule", memory_id=memory.public_id)
    assert rule["status"] == "candidate" and rule["memory_id"] == memory.public_id
    assert ok(writer, "promote_rule", memory_id=memory.public_id)["id"] == rule["id"]
    assert (
        refused(make_token(tenancy.reader), "promote_rule", memory_id=memory.public_id)["code"]
        == "forbidden"
    )

    assert refused(writer, "reject_rule", rule_id=rule["id"])["code"] == "forbidden"
    read_only = make_token(tenancy.owner, read_only=True)
    assert refused(read_only, "reject_rule", rule_id=rule["id"])["code"] == "forbidden"
    assert (
        refused(make_token(tenancy.outsider), "reject_rule", rule_id=rule["id"])["code"]
        == "not_found"
    )
    assert ok(owner, "reject_rule", rule_id=rule["id"])["status"] == "rejected"
    assert refused(owner, "reject_rule", rule_id=rule["id"])["code"] == "conflict"
    # Rejected and unchanged: nominating it again is refused; approval stays with a person.
    assert refused(writer, "promote_rule", memory_id=memory.public_id)["code"] == "conflict"
    assert Rule.objects.get(public_id=rule["id"]).status == RuleStatus.REJECTED


def test_import_memory_takes_an_export_archive_or_a_markdown_file(tenancy):
    team = tenancy.team.public_id
    remember(tenancy.owner, "The on-call rota lives in PagerDuty.")
    owner = make_token(tenancy.owner)
    export = tenancy.client(tenancy.owner).get(f"/api/v1/scopes/{personal(tenancy.owner)}/export")
    archive = base64.b64encode(b"".join(export.streaming_content)).decode()

    answer = ok(owner, "import_memory", scope=team, archive_base64=archive)
    assert answer["archive"] == {
        "scope": team,
        "imported": 1,
        "absorbed": 0,
        "skipped": 0,
        "conflicts": 0,
    }
    again = ok(owner, "import_memory", scope=team, archive_base64=archive)
    assert again["archive"]["skipped"] == 1

    markdown = "## Tests\n\nRun pytest with -x before pushing.\n\n## Style\n\nRuff formats code."
    pieces = ok(owner, "import_memory", scope=team, markdown=markdown, source_path="CLAUDE.md")
    assert [p["outcome"] for p in pieces["pieces"]] == ["created", "created"]
    assert Memory.objects.filter(scope=tenancy.team).count() == 3

    error = refused(owner, "import_memory", scope=team)
    assert error["code"] == "validation_failed"
    error = refused(owner, "import_memory", scope=team, archive_base64="not base64!")
    assert error["code"] == "validation_failed" and "archive_base64" in error["details"]
    error = refused(owner, "import_memory", scope=team, archive_base64="UEsFBgA=")
    assert error["code"] == "validation_failed" and "archive_base64" in error["details"]
    reader = make_token(tenancy.reader)
    assert refused(reader, "import_memory", scope=team, markdown=markdown)["code"] == "forbidden"


def test_benchmark_memory_scores_the_scope_as_recall_answers_and_logs_each_question(tenancy):
    team = tenancy.team.public_id
    flags = remember(tenancy.owner, "Feature flags live in flags.yaml.", scope=team)
    rota = remember(tenancy.owner, "The on-call rota lives in PagerDuty.", scope=team)
    secret = make_token(tenancy.owner)
    cases = [
        {"question": "where do feature flags live", "expected_ids": [flags.public_id]},
        {"question": "who is on call in PagerDuty", "expected_ids": [flags.public_id]},
    ]

    answer = ok(secret, "benchmark_memory", scope=team, cases=cases, k=1)

    first, second = answer["results"]
    assert first["found_ids"][0] == flags.public_id and first["reciprocal_rank"] == 1.0
    assert second["found_ids"] == [rota.public_id]
    assert second["missed"] == [flags.public_id] and second["recall"] == 0.0
    assert answer["recall_at_k"] == 0.5 and answer["mrr"] == 0.5
    assert [case["question"] for case in answer["misses"]] == [cases[1]["question"]]
    logged = ActivityLog.objects.filter(user=tenancy.owner, operation="recall")
    assert sorted(logged.values_list("query", flat=True)) == sorted(c["question"] for c in cases)

    unknown = [{"question": "flags", "expected_ids": ["mem_nope"]}]
    error = refused(secret, "benchmark_memory", scope=team, cases=unknown)
    assert error["code"] == "validation_failed" and "cases" in error["details"]
    outsider = make_token(tenancy.outsider)
    assert refused(outsider, "benchmark_memory", scope=team, cases=cases)["code"] == "not_found"


def test_rest_moves_shares_promotes_and_benchmarks(tenancy):
    team = tenancy.team.public_id
    client = tenancy.client(tenancy.owner)
    mine = remember(tenancy.owner, "Invoices are generated on the 1st.")

    refused_move = client.post(
        "/api/v1/memories/move", {"memory_ids": [mine.public_id], "to_scope": team}, format="json"
    )
    assert refused_move.status_code == 400
    assert "confirm" in refused_move.json()["error"]["details"]
    body = {"memory_ids": [mine.public_id], "to_scope": team, "confirm": True}
    moved = client.post("/api/v1/memories/move", body, format="json")
    assert moved.status_code == 200, moved.content
    new_id = moved.json()["results"][0]["memory"]["id"]

    shared = client.post(
        f"/api/v1/memories/{new_id}/share", {"to_scope": personal(tenancy.owner)}, format="json"
    )
    assert shared.status_code == 201, shared.content
    promoted = client.post(f"/api/v1/memories/{new_id}/promote")
    assert promoted.status_code == 200 and promoted.json()["status"] == "candidate"
    cases = {"cases": [{"question": "when are invoices generated", "expected_ids": [new_id]}]}
    scored = client.post(f"/api/v1/scopes/{team}/benchmark", cases, format="json")
    assert scored.status_code == 200 and scored.json()["recall_at_k"] == 1.0
