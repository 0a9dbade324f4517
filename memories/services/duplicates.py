"""Duplicates of new memories, found in one query per batch: identical text, and near ones.

An identical valid memory (same normalized text in the scope) absorbs the write; near ones
(cosine >= NEAR_DUPLICATE_SIMILARITY) are reported, and absorb it only when the caller asks.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memories.models import Memory

if TYPE_CHECKING:
    from memories.services.remember import Prepared


@dataclass(frozen=True)
class SimilarMemory:
    id: str
    similarity: float
    age_days: float


def identical_many(prepared: list[Prepared]) -> dict[tuple[int, str], Memory]:
    """Valid memories with the same normalized text in the same scope, in one query."""
    wanted = {p.key for p in prepared}
    found = Memory.objects.select_related("scope").filter(
        valid=True,
        scope_id__in={scope_id for scope_id, _ in wanted},
        content_hash__in={digest for _, digest in wanted},
    )
    return {
        (m.scope_id, m.content_hash): m for m in found if (m.scope_id, m.content_hash) in wanted
    }


# The nearest on the search copy (memories.models.search): the scope, known only when the
# statement runs, prunes its partitions then; the memory is read by its id. The ids left out
# (`besides`) are read once as the statement runs: given as a constant array, the planner
# weighed each id for each partition (14 ms more planning for 64 ids, the same rows found).
_NEAR_SQL = """
SELECT q.i, m.public_id, n.distance, m.created_at
FROM unnest(%s::int[], %s::bigint[], %s::text[]::vector[]) AS q(i, scope_id, v)
CROSS JOIN LATERAL (
    SELECT x.memory_id, x.embedding <=> q.v AS distance
    FROM memories_memorysearch x
    WHERE x.scope_id = q.scope_id AND x.valid AND x.embedding IS NOT NULL
        AND x.memory_id <> ALL (ARRAY(SELECT unnest(%s::bigint[])))
    ORDER BY x.embedding <=> q.v
    LIMIT 3
) AS n
JOIN memories_memory m ON m.id = n.memory_id
"""


def near_many(
    prepared: dict[int, Prepared], *, besides: Collection[int] = ()
) -> dict[int, list[SimilarMemory]]:
    """Near duplicates for several new memories in one round trip, among the memories stored
    before them: `besides` names the rows their own batch inserted already (by id)."""
    if not prepared:
        return {}
    indexes = list(prepared)
    scope_ids = [prepared[i].scope.id for i in indexes]
    vectors = [prepared[i].derived.embedded.literal for i in indexes]  # the insert's too
    threshold = settings.NEAR_DUPLICATE_SIMILARITY
    now = timezone.now()
    similar: dict[int, list[SimilarMemory]] = {i: [] for i in indexes}
    with connection.cursor() as cursor:
        cursor.execute(_NEAR_SQL, [indexes, scope_ids, vectors, list(besides)])
        for index, public_id, distance, created in cursor.fetchall():
            if 1.0 - distance >= threshold:
                similar[index].append(
                    SimilarMemory(
                        id=public_id,
                        similarity=1.0 - distance,
                        age_days=round((now - created).total_seconds() / 86400, 2),
                    )
                )
    return similar
