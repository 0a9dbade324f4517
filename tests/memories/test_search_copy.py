"""The search copy of memories (memories_memorysearch, partitioned by scope) follows every write.

PostgreSQL keeps it (migration 0034's trigger and cascade): after each door's write, each
lifecycle step, a move, a translation, a re-embedding and an erasure, every memory has exactly
one search row holding its current scope, kind, validity, translation status, embedding and
full-text vector, and recall (which searches on that copy) finds what it should.
"""

from __future__ import annotations

from django.core.management import call_command
from django.db import connection

from memories.models import SEARCH_PARTITIONS, Memory
from tests.factories import make_scope
from tests.fakes.anthropic_api import tool_answer
from tests.memories.canonical_support import ENGLISH, GERMAN

# Memories whose search row is missing, extra or differs from the memory's columns.
_MISMATCHED = """
SELECT coalesce(m.id, x.memory_id)
FROM memories_memory m FULL JOIN memories_memorysearch x ON x.memory_id = m.id
WHERE m.id IS NULL OR x.memory_id IS NULL
   OR (m.scope_id, m.kind_id, m.valid, m.valid_from, m.valid_until, m.validity_gaps,
       m.translation_status, m.embedding, m.search_vector)
      IS DISTINCT FROM
      (x.scope_id, x.kind_id, x.valid, x.valid_from, x.valid_until, x.validity_gaps,
       x.translation_status, x.embedding, x.search_vector)
"""


def assert_mirrored() -> None:
    with connection.cursor() as cursor:
        cursor.execute(_MISMATCHED)
        assert cursor.fetchall() == []
        cursor.execute(
            "SELECT count(*) FROM memories_memorysearch GROUP BY memory_id HAVING count(*) > 1"
        )
        assert cursor.fetchall() == []


def recalled(client, query: str, scopes: list[str] | None = None) -> list[str]:
    body = {"query": query}
    if scopes:
        body["scopes"] = scopes
    response = client.post("/api/v1/recall", body, format="json")
    assert response.status_code == 200, response.json()
    return [hit["id"] for hit in response.json()["results"]]


def written(response) -> str:
    assert response.status_code in (200, 201), response.json()
    return response.json()["id"]


def test_the_table_is_partitioned_by_scope_with_an_index_pair_per_partition(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'memories_memorysearch'::regclass"
        )
        assert cursor.fetchone()[0] == SEARCH_PARTITIONS
        cursor.execute(
            "SELECT count(*) FILTER (WHERE indexdef LIKE '%%USING hnsw%%'),"
            " count(*) FILTER (WHERE indexdef LIKE '%%USING gin%%')"
            " FROM pg_indexes WHERE tablename LIKE 'memories_memorysearch\\_%%'"
        )
        assert cursor.fetchone() == (SEARCH_PARTITIONS, SEARCH_PARTITIONS)
        # memories_memory itself no longer carries a vector or text index: one HNSW insert a write.
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memories_memory'"
            " AND (indexdef LIKE '%%USING hnsw%%' OR indexdef LIKE '%%USING gin%%')"
        )
        assert cursor.fetchall() == []


def test_every_write_and_lifecycle_step_is_mirrored_and_recall_follows(tenancy, owner):
    team = tenancy.team.public_id
    other = make_scope(owner=tenancy.owner, slug="other")
    # REST, one and a batch.
    one = written(
        owner.post(
            "/api/v1/memories",
            {"content": "The quokka cache warms up at 04:00 UTC.", "kind": "fact", "scope": team},
            format="json",
        )
    )
    batch = owner.post(
        "/api/v1/memories/batch",
        {
            "items": [
                {"content": "Deploys of the wombat service need two approvals.",
                 "kind": "convention", "scope": team},
                {"content": "The axolotl queue drops messages over 256 kB.",
                 "kind": "gotcha", "scope": team},
            ]
        },
        format="json",
    )  # fmt: skip
    assert batch.status_code == 200, batch.json()
    wombat, axolotl = (item["memory"]["id"] for item in batch.json()["results"])
    assert_mirrored()
    assert one in recalled(owner, "quokka cache", [team])
    assert axolotl in recalled(owner, "axolotl queue messages", [team])

    # Edit: new text, new embedding, new kind.
    edited = owner.patch(
        f"/api/v1/memories/{one}",
        {"content": "The pangolin cache warms up at 05:00 UTC.", "kind": "convention"},
        format="json",
    )
    assert edited.status_code == 200, edited.json()
    assert_mirrored()
    assert one in recalled(owner, "pangolin cache", [team])

    # Forget, restore.
    url = f"/api/v1/memories/{wombat}"
    assert owner.post(f"{url}/forget", {"reason": "wrong"}, format="json").status_code == 200
    assert_mirrored()
    assert wombat not in recalled(owner, "wombat service approvals", [team])
    assert owner.post(f"{url}/restore").status_code == 200
    assert_mirrored()
    assert wombat in recalled(owner, "wombat service approvals", [team])

    # Supersede.
    newer = written(
        owner.post(
            "/api/v1/memories",
            {"content": "Deploys of the wombat service need one approval since May.",
             "kind": "convention", "scope": team},
            format="json",
        )
    )  # fmt: skip
    superseded = owner.post(f"{url}/supersede", {"by": newer}, format="json")
    assert superseded.status_code == 200, superseded.json()
    assert_mirrored()
    found = recalled(owner, "wombat service approvals", [team])
    assert newer in found and wombat not in found

    # Move: the copy in the other scope is found there, the original (forgotten) nowhere.
    moved = owner.post(
        "/api/v1/memories/move",
        {"memory_ids": [axolotl], "to_scope": other.public_id, "confirm": True},
        format="json",
    )
    assert moved.status_code == 200, moved.json()
    [result] = moved.json()["results"]
    assert_mirrored()
    assert result["memory"]["id"] in recalled(owner, "axolotl queue messages", [other.public_id])
    assert axolotl not in recalled(owner, "axolotl queue messages", [team])

    # A memory's own scope changed in place (no service does it today; the trigger moves its
    # row between partitions all the same).
    Memory.objects.filter(public_id=newer).update(scope=other)
    assert_mirrored()
    assert newer in recalled(owner, "wombat service approvals", [other.public_id])
    assert newer not in recalled(owner, "wombat service approvals", [team])

    # Re-embedding: an embedding lost and computed again by the management command.
    Memory.objects.filter(public_id=one).update(embedding=None)
    assert_mirrored()
    call_command("reembed", "--only-missing", verbosity=0)
    assert_mirrored()
    assert one in recalled(owner, "pangolin cache", [team])

    # Erasure: deleting the scope deletes its memories, and their search rows with them.
    assert owner.delete(f"/api/v1/scopes/{other.public_id}").status_code == 204
    assert_mirrored()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memorysearch WHERE scope_id = %s", [other.pk])
        assert cursor.fetchone()[0] == 0


def test_a_translation_is_mirrored(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    fake_anthropic.script(tool_answer(ENGLISH))
    with django_capture_on_commit_callbacks(execute=True):
        response = owner.post(
            "/api/v1/memories",
            {"content": GERMAN, "kind": "decision", "scope": tenancy.team.public_id},
            format="json",
        )
        memory = written(response)
        # Pending: mirrored as written, found by its German words.
        assert_mirrored()
    memory_row = Memory.objects.get(public_id=memory)
    assert memory_row.translation_status == "done"
    assert_mirrored()
    found = recalled(owner, "deploy to production on Friday", [tenancy.team.public_id])
    assert memory in found


def test_the_migration_fills_the_copy_from_one_table(tenancy, owner):
    """Migration 0034 on memories written before it (undone to 0033, then applied again, in the
    test's transaction): every memory gets its row, and recall finds them through it."""
    from django.db.migrations.executor import MigrationExecutor

    team = tenancy.team.public_id
    kept = written(
        owner.post(
            "/api/v1/memories",
            {"content": "The narwhal backups run from the replica.", "kind": "fact", "scope": team},
            format="json",
        )
    )
    forgotten = written(
        owner.post(
            "/api/v1/memories",
            {"content": "The narwhal backups ran from the primary.", "kind": "fact", "scope": team},
            format="json",
        )
    )
    owner.post(f"/api/v1/memories/{forgotten}/forget", {"reason": "old"}, format="json")
    with connection.cursor() as cursor:
        # The migration alters memories_memory: the test's deferred checks run first.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor = MigrationExecutor(connection)
    executor.migrate([("memories", "0033_recalled_index")])
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('memories_memorysearch')")
        assert cursor.fetchone()[0] is None
        cursor.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname IN"
            " ('memory_embedding_hnsw', 'memory_search_gin')"
        )
        assert cursor.fetchone()[0] == 2
    executor.loader.build_graph()
    executor.migrate([("memories", "0034_memory_search")])
    assert_mirrored()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memorysearch")
        assert cursor.fetchone()[0] == Memory.objects.count() >= 2
    found = recalled(owner, "narwhal backups replica", [team])
    assert kept in found and forgotten not in found
