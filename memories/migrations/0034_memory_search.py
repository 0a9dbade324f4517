"""The search copy of memories, partitioned by scope (memories.models.search).

In one transaction: the partitioned table and its 16 hash partitions, the trigger on
memories_memory that keeps it, the copy of every memory (in SQL), then the indexes (HNSW and GIN
per partition, built after the fill), then the HNSW and GIN indexes of memories_memory dropped.

What it locks (docs/scaling.md, "Partitioned search: the migration"): creating the trigger takes
a SHARE ROW EXCLUSIVE lock on memories_memory until the migration commits, so from the trigger on
writes of memories wait (reads go on); dropping memories_memory's two indexes at the end takes an
ACCESS EXCLUSIVE lock on it, held only from that last step to the commit.
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
import pgvector.django.indexes
import pgvector.django.vector
from django.db import migrations, models

PARTITIONS = 16  # memories.models.search.SEARCH_PARTITIONS when this was written

COLUMNS = (
    "scope_id, memory_id, kind_id, valid, valid_from, valid_until, validity_gaps,"
    " translation_status, embedding, search_vector"
)
FROM_MEMORY = (
    "{row}.scope_id, {row}.id, {row}.kind_id, {row}.valid, {row}.valid_from, {row}.valid_until,"
    " {row}.validity_gaps, {row}.translation_status, {row}.embedding, {row}.search_vector"
)

CREATE_TABLE = f"""
CREATE TABLE memories_memorysearch (
    scope_id bigint NOT NULL,
    memory_id bigint NOT NULL
        REFERENCES memories_memory (id) ON DELETE CASCADE,
    kind_id varchar(32) NOT NULL,
    valid boolean NOT NULL,
    valid_from timestamptz NULL,
    valid_until timestamptz NULL,
    validity_gaps boolean NOT NULL,
    translation_status varchar(16) NOT NULL,
    embedding vector(384) NULL,
    search_vector tsvector NULL,
    PRIMARY KEY (scope_id, memory_id)
) PARTITION BY HASH (scope_id);
""" + "".join(
    f"CREATE TABLE memories_memorysearch_{remainder} PARTITION OF memories_memorysearch"
    f" FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {remainder})"
    # The embedding stays in the row, not in TOAST (as memories_memory's, migration 0021): an
    # exact distance or a candidate's reads one page.
    " WITH (toast_tuple_target = 8160);\n"
    for remainder in range(PARTITIONS)
)

# The row of a memory, upserted after each insert and each update that changed a copied column;
# a memory moved to another scope leaves its old scope's partition. Deleting the memory cascades.
CREATE_TRIGGER = f"""
CREATE FUNCTION memories_memorysearch_mirror() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.scope_id IS DISTINCT FROM NEW.scope_id THEN
        DELETE FROM memories_memorysearch WHERE scope_id = OLD.scope_id AND memory_id = OLD.id;
    END IF;
    INSERT INTO memories_memorysearch ({COLUMNS})
    VALUES ({FROM_MEMORY.format(row="NEW")})
    ON CONFLICT (scope_id, memory_id) DO UPDATE SET
        kind_id = EXCLUDED.kind_id, valid = EXCLUDED.valid, valid_from = EXCLUDED.valid_from,
        valid_until = EXCLUDED.valid_until, validity_gaps = EXCLUDED.validity_gaps,
        translation_status = EXCLUDED.translation_status, embedding = EXCLUDED.embedding,
        search_vector = EXCLUDED.search_vector;
    RETURN NULL;
END
$$;
CREATE TRIGGER memory_search_insert AFTER INSERT ON memories_memory
    FOR EACH ROW EXECUTE FUNCTION memories_memorysearch_mirror();
-- `valid` and `search_vector` are generated from the validity bounds and the content. The
-- embeddings are compared as text: pgvector's `=` lives in the extension's schema, which a
-- restore (pg_dump's empty search_path) would not find in the condition.
CREATE TRIGGER memory_search_update
    AFTER UPDATE OF scope_id, kind_id, valid_from, valid_until, validity_gaps, translation_status,
        embedding, content
    ON memories_memory FOR EACH ROW
    WHEN ((OLD.scope_id, OLD.kind_id, OLD.valid, OLD.valid_from, OLD.valid_until,
           OLD.validity_gaps, OLD.translation_status, OLD.embedding::text, OLD.search_vector)
          IS DISTINCT FROM
          (NEW.scope_id, NEW.kind_id, NEW.valid, NEW.valid_from, NEW.valid_until,
           NEW.validity_gaps, NEW.translation_status, NEW.embedding::text, NEW.search_vector))
    EXECUTE FUNCTION memories_memorysearch_mirror();
"""

DROP = """
DROP TRIGGER IF EXISTS memory_search_update ON memories_memory;
DROP TRIGGER IF EXISTS memory_search_insert ON memories_memory;
DROP FUNCTION IF EXISTS memories_memorysearch_mirror();
DROP TABLE IF EXISTS memories_memorysearch;
"""

FILL = f"""
INSERT INTO memories_memorysearch ({COLUMNS})
SELECT {FROM_MEMORY.format(row="m")} FROM memories_memory m;
"""

# Each partition's graph is built in memory when maintenance_work_mem holds it (about 2.2 kB a
# memory); beyond it the build goes on far slower on disk. For this transaction only.
BUILD_MEMORY = f"""
DO $$
DECLARE memories bigint;
BEGIN
    SELECT count(*) INTO memories FROM memories_memory;
    PERFORM set_config(
        'maintenance_work_mem',
        greatest(256, least(8192, memories * 3 / 1000 / {PARTITIONS}))::text || 'MB',
        true
    );
END
$$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0033_recalled_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="MemorySearch",
                    fields=[
                        (
                            "pk",
                            models.CompositePrimaryKey(
                                "scope_id",
                                "memory",
                                blank=True,
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("scope_id", models.BigIntegerField()),
                        (
                            "memory",
                            models.ForeignKey(
                                db_constraint=False,
                                db_index=False,
                                on_delete=django.db.models.deletion.DO_NOTHING,
                                related_name="+",
                                to="memories.memory",
                            ),
                        ),
                        ("kind_id", models.CharField(max_length=32)),
                        ("valid", models.BooleanField()),
                        ("valid_from", models.DateTimeField(null=True)),
                        ("valid_until", models.DateTimeField(null=True)),
                        ("validity_gaps", models.BooleanField()),
                        ("translation_status", models.CharField(max_length=16)),
                        (
                            "embedding",
                            pgvector.django.vector.VectorField(dimensions=384, null=True),
                        ),
                        (
                            "search_vector",
                            django.contrib.postgres.search.SearchVectorField(null=True),
                        ),
                    ],
                    options={"managed": True},
                ),
            ],
            database_operations=[
                migrations.RunSQL(CREATE_TABLE + CREATE_TRIGGER, reverse_sql=DROP),
            ],
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop),
        migrations.RunSQL(BUILD_MEMORY, reverse_sql=migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="memorysearch",
            index=pgvector.django.indexes.HnswIndex(
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="memorysearch_embedding_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        migrations.AddIndex(
            model_name="memorysearch",
            index=django.contrib.postgres.indexes.GinIndex(
                fields=["search_vector"], name="memorysearch_gin"
            ),
        ),
        migrations.AddIndex(
            model_name="memorysearch",
            index=models.Index(fields=["memory"], name="memorysearch_memory"),
        ),
        migrations.RemoveIndex(model_name="memory", name="memory_embedding_hnsw"),
        migrations.RemoveIndex(model_name="memory", name="memory_search_gin"),
    ]
