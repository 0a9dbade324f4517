"""The search copy of memories: what recall, deduplication and the hygiene scan search on, in a
table partitioned by scope.

One row per memory, kept by PostgreSQL itself (migration 0034's trigger on memories_memory: an
insert, or an update of one of the copied columns, upserts the row; a relocation between scopes
moves it; deleting the memory cascades), so no door can write a memory without it. It holds only
what the searches filter and rank on: the scope, the kind, the validity bounds, the translation
status, the embedding and the full-text vector. The memory keeps its columns and their owner
functions; this is an index-like copy, never written by Python.

Hash partitions by `scope_id` (`SEARCH_PARTITIONS`), each with its own HNSW and GIN index: a
search names its scopes as literals, so the planner reads only their partitions, and each
partition's graph is a sixteenth of the whole (docs/scaling.md, "Capacity past 10 million
memories", has the figures). Nothing refers to this table; the memory's `id` stays the key every
other table refers to.
"""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import VectorField

from memories.models.catalogue import EMBEDDING_DIMENSIONS, cosine_hnsw
from memories.models.memory import Memory

# The partitions of migration 0034. Changing it takes a migration that copies the rows into a
# table with the new number (hash partitions cannot be split in place).
SEARCH_PARTITIONS = 16


class MemorySearch(models.Model):
    pk = models.CompositePrimaryKey("scope_id", "memory")
    scope_id = models.BigIntegerField()
    # DO_NOTHING in Django: PostgreSQL's own ON DELETE CASCADE removes the row (migration 0034).
    memory = models.ForeignKey(
        Memory, on_delete=models.DO_NOTHING, related_name="+", db_constraint=False, db_index=False
    )
    kind_id = models.CharField(max_length=32)
    valid = models.BooleanField()
    valid_from = models.DateTimeField(null=True)
    valid_until = models.DateTimeField(null=True)
    validity_gaps = models.BooleanField()
    translation_status = models.CharField(max_length=16)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True)
    search_vector = SearchVectorField(null=True)

    class Meta:
        # The table, its partitions, its foreign key and the trigger are migration 0034's SQL.
        managed = True
        indexes = [
            cosine_hnsw(name="memorysearch_embedding_hnsw"),
            GinIndex(fields=["search_vector"], name="memorysearch_gin"),
            # The cascade from a deleted memory finds its row by the memory alone.
            models.Index(fields=["memory"], name="memorysearch_memory"),
        ]

    def __str__(self) -> str:
        return f"search row of memory {self.memory_id} in scope {self.scope_id}"
