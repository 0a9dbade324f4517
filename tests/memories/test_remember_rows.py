"""What a remember writes beside the memory, and its duplicate lookups, as the write path now
sends them: the scope's aliases looked up while the model runs, the provenance, mention and
validity rows in one message (sent while the model computes the vector, before the memory they
refer to), the identical lookup by key, the near lookup's kept plan."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Entity, EntityMention, Memory, Provenance, ValidityPeriod
from tests.statements import as_run


def remember(client, content, **extra):
    return client.post(
        "/api/v1/memories", {"content": content, "kind": "fact", **extra}, format="json"
    )


def test_a_new_memorys_rows_arrive_in_one_message_and_all_are_kept(tenancy, owner, team):
    known = remember(
        owner,
        "Invoices are rendered by a separate worker.",
        scope=team,
        entities=[{"name": "billing service", "kind": "service", "aliases": ["billing-svc"]}],
    )
    assert known.status_code == 201, known.json()
    with CaptureQueriesContext(connection) as captured:
        response = remember(
            owner,
            "Billing-Svc retries webhooks 4 times (config/billing/77.yaml).",
            scope=team,
            conversation_id="conv-9",
        )
    assert response.status_code == 201, response.json()
    memory = Memory.objects.get(public_id=response.json()["id"])
    together = [
        query["sql"]
        for query in captured.captured_queries
        if 'INSERT INTO "memories_provenance"' in query["sql"]
    ]
    assert len(together) == 1
    assert 'INSERT INTO "memories_entitymention"' in together[0]
    assert 'INSERT INTO "memories_validityperiod"' in together[0]
    [row] = Provenance.objects.filter(memory=memory)
    assert (row.absorbed, row.conversation_id) == (False, "conv-9")
    mentioned = {
        mention.entity.name: mention.entity
        for mention in EntityMention.objects.filter(memory=memory).select_related("entity")
    }
    # The alias the scope knew before the write names the entity it already had.
    assert mentioned["billing service"] == Entity.objects.get(
        scope__public_id=team, name="billing service"
    )
    assert mentioned["config/billing/77.yaml"].kind == "path"
    [period] = ValidityPeriod.objects.filter(memory=memory)
    assert period.valid_until is None and period.valid_from == memory.valid_from


def test_a_batch_finds_identical_memories_and_its_own_repeats(tenancy, owner, team):
    first = remember(owner, "Deploys freeze on Fridays after noon.", scope=team).json()
    changelog = "The changelog is generated from commit titles."
    items = [
        {"content": "  deploys FREEZE on fridays after noon. ", "kind": "fact", "scope": team},
        {"content": changelog, "kind": "fact", "scope": team},
        {"content": changelog, "kind": "fact", "scope": team},
    ]
    response = owner.post("/api/v1/memories/batch", {"items": items}, format="json")
    assert response.status_code == 200, response.json()
    absorbed, created, repeated = response.json()["results"]
    assert [absorbed["status"], created["status"], repeated["status"]] == [200, 201, 200]
    assert absorbed["memory"]["id"] == first["id"]
    assert repeated["memory"]["id"] == created["memory"]["id"] != first["id"]
    assert Memory.objects.filter(scope__public_id=team).count() == 2
    assert Provenance.objects.filter(memory__public_id=first["id"], absorbed=True).count() == 1


def test_near_duplicates_are_reported_nearest_first_on_every_write(tenancy, owner, team):
    remember(owner, "The staging database is reset every night at 2am UTC.", scope=team)
    remember(owner, "The staging database is reset each night at 2am UTC.", scope=team)
    # The second write runs the near lookup on the plan the first one's connection kept.
    for text in (
        "The staging database gets reset every night at 2am UTC.",
        "The staging database is wiped and reset every night at 2am UTC.",
    ):
        response = remember(owner, text, scope=team)
        assert response.status_code == 201, response.json()
        similar = [item["similarity"] for item in response.json()["similar_existing"]]
        assert similar and similar == sorted(similar, reverse=True)


def _near_lookup_at(sql: str) -> int:
    """Where a message runs the near lookup, its statements prepared on the connection read
    as their text (`tests.statements.as_run`)."""
    return as_run(sql).find("memories_memorysearch")


def test_a_single_writes_rows_go_before_the_model_ends_and_lookup_and_insert_after(
    tenancy, owner, team
):
    first = remember(owner, "The nightly backup is copied to the cold bucket at 3am.", scope=team)
    with CaptureQueriesContext(connection) as captured:
        response = remember(
            owner, "The nightly backup gets copied to the cold bucket at 3am.", scope=team
        )
    assert response.status_code == 201, response.json()
    answer = response.json()
    # The lookup runs first in the message: it finds the memory stored before, not this one.
    assert [item["id"] for item in answer["similar_existing"]] == [first.json()["id"]]
    sent = [as_run(query["sql"]) for query in captured.captured_queries]
    [at] = [i for i, sql in enumerate(sent) if 'INSERT INTO "memories_memory"' in sql]
    message = sent[at]
    # The insert ran as the statement the first write prepared on this connection, not as
    # its text parsed and planned again.
    assert 'INSERT INTO "memories_memory"' not in captured.captured_queries[at]["sql"]
    assert 0 <= _near_lookup_at(message) < message.index('INSERT INTO "memories_memory"')
    # The rows that refer to the memory went in before it, in a message of their own (their
    # foreign keys are checked at COMMIT), while the model computed its vector.
    [rows_at] = [i for i, sql in enumerate(sent) if 'INSERT INTO "memories_provenance"' in sql]
    assert rows_at < at
    assert 'INSERT INTO "memories_validityperiod"' in sent[rows_at]
    assert _near_lookup_at(sent[rows_at]) < 0
    memory = Memory.objects.get(public_id=answer["id"])
    assert memory.valid and memory.embedding is not None
    assert Provenance.objects.filter(memory=memory, absorbed=False).count() == 1
    assert ValidityPeriod.objects.filter(memory=memory, valid_until__isnull=True).count() == 1

    # Asked to join a near duplicate, the write waits for the lookup's answer before inserting.
    with CaptureQueriesContext(connection) as captured:
        joined = remember(
            owner,
            "The nightly backup is copied into the cold bucket at 3am.",
            scope=team,
            absorb_similar=True,
        )
    assert joined.status_code == 200, joined.json()
    assert joined.json()["id"] in {first.json()["id"], answer["id"]}
    lookups = [q["sql"] for q in captured.captured_queries if _near_lookup_at(q["sql"]) >= 0]
    assert lookups and all('INSERT INTO "memories_memory"' not in sql for sql in lookups)
    assert Memory.objects.filter(scope__public_id=team).count() == 2


def _terminate_other_sessions() -> int:
    """End every other session of this test database (the helper threads' connections)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_in_its_own_transaction_a_write_looks_up_near_duplicates_beside_its_insert(
    tenancy, kinds_seeded, owner, team
):
    """Committed before, a near duplicate is found by the lookup on the other connection, while
    the request's connection inserts (the lookup is not in its messages); when that connection
    fails, the lookup runs on the request's, still leaving the new memory out."""
    first = remember(owner, "The nightly backup is copied to the cold bucket at 3am.", scope=team)
    assert first.status_code == 201, first.json()
    with CaptureQueriesContext(connection) as captured:
        second = remember(
            owner, "The nightly backup gets copied to the cold bucket at 3am.", scope=team
        )
    assert second.status_code == 201, second.json()
    assert [item["id"] for item in second.json()["similar_existing"]] == [first.json()["id"]]
    sent = [as_run(query["sql"]) for query in captured.captured_queries]
    assert any('INSERT INTO "memories_memory"' in sql for sql in sent)
    assert all(_near_lookup_at(sql) < 0 for sql in sent)

    assert _terminate_other_sessions() >= 1
    with CaptureQueriesContext(connection) as captured:
        third = remember(
            owner, "The nightly backup is copied into the cold bucket at 3am.", scope=team
        )
    assert third.status_code == 201, third.json()
    similar = [item["id"] for item in third.json()["similar_existing"]]
    assert sorted(similar) == sorted([first.json()["id"], second.json()["id"]])
    assert third.json()["id"] not in similar
    sent = [as_run(query["sql"]) for query in captured.captured_queries]
    [lookup] = [sql for sql in sent if _near_lookup_at(sql) >= 0]
    assert 'INSERT INTO "memories_memory"' not in lookup

    # The next write opens another connection beside and finds all three there.
    fourth = remember(owner, "The nightly backup is copied to the cold bucket at 3 am.", scope=team)
    assert fourth.status_code == 201, fourth.json()
    assert len(fourth.json()["similar_existing"]) == 3
    assert Memory.objects.filter(scope__public_id=team).count() == 4


@pytest.mark.django_db(transaction=True)
def test_in_its_own_transaction_a_new_memorys_insert_commits_it(tenancy, kinds_seeded, owner, team):
    """Nothing is left to write after the insert of a new memory without an idempotency key:
    the insert's message ends with COMMIT, and the write is whole for any other connection.
    With a key, the key's record is written after the insert, and the message does not commit."""
    with CaptureQueriesContext(connection) as captured:
        response = remember(owner, "Release tags are signed with the team's GPG key.", scope=team)
    assert response.status_code == 201, response.json()
    sent = [as_run(query["sql"]) for query in captured.captured_queries]
    [message] = [sql for sql in sent if 'INSERT INTO "memories_memory"' in sql]
    assert message.rstrip().endswith("COMMIT")
    with psycopg.connect(**connection.get_connection_params()) as other:
        written = other.execute(
            "SELECT m.embedding IS NOT NULL, count(DISTINCT p.id), count(DISTINCT v.id)"
            " FROM memories_memory m JOIN memories_provenance p ON p.memory_id = m.id"
            " JOIN memories_validityperiod v ON v.memory_id = m.id WHERE m.public_id = %s"
            " GROUP BY m.id",
            [response.json()["id"]],
        ).fetchone()
    assert written == (True, 1, 1)

    with CaptureQueriesContext(connection) as captured:
        keyed = remember(
            owner,
            "Release notes are drafted from merged pull requests.",
            scope=team,
            idempotency_key="notes-1",
        )
    assert keyed.status_code == 201, keyed.json()
    sent = [as_run(q["sql"]) for q in captured.captured_queries]
    [message] = [sql for sql in sent if 'INSERT INTO "memories_memory"' in sql]
    assert not message.rstrip().endswith("COMMIT")
    again = remember(
        owner,
        "Release notes are drafted from merged pull requests.",
        scope=team,
        idempotency_key="notes-1",
    )
    assert again.status_code == 201 and again.json()["id"] == keyed.json()["id"]


@pytest.mark.django_db(transaction=True)
def test_a_write_whose_committing_message_fails_leaves_nothing(tenancy, kinds_seeded, owner, team):
    """The rows sent before the memory's insert (provenance, validity, mentions, new entities)
    are rolled back with it when its message fails, its COMMIT not run."""
    counts = _counts()
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION zm_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN IF NEW.content LIKE '%%refused by the test%%' THEN"
            " RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER zm_test_refuse BEFORE INSERT ON memories_memory"
            " FOR EACH ROW EXECUTE FUNCTION zm_test_refuse()"
        )
    try:
        failed = remember(
            owner,
            "Orbitfox (see config/orbitfox.yaml) is refused by the test.",
            scope=team,
            entities=[{"name": "Orbitfox", "kind": "service"}],
        )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER zm_test_refuse ON memories_memory")
            cursor.execute("DROP FUNCTION zm_test_refuse()")
    assert failed.status_code == 500
    assert _counts() == counts
    # The connection is usable, and the next write is whole.
    after = remember(
        owner,
        "Orbitfox (see config/orbitfox.yaml) ships on Mondays.",
        scope=team,
        entities=[{"name": "Orbitfox", "kind": "service"}],
    )
    assert after.status_code == 201, after.json()
    assert Entity.objects.filter(scope__public_id=team, name="Orbitfox").count() == 1


def _counts() -> tuple[int, ...]:
    return tuple(
        model.objects.count()
        for model in (Memory, Provenance, ValidityPeriod, EntityMention, Entity)
    )
