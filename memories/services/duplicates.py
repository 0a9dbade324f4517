"""Duplicates of new memories, found in one query per batch: identical text, and near ones.

An identical valid memory (same normalized text in the scope) absorbs the write; near ones
(cosine >= NEAR_DUPLICATE_SIMILARITY) are reported, and absorb it only when the caller asks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from memories.models import Memory
from zeromemory.core import beside
from zeromemory.core.prepared import execute as execute_prepared
from zeromemory.core.prepared import execute_then

if TYPE_CHECKING:
    from memories.services.remember import Prepared


@dataclass(frozen=True)
class SimilarMemory:
    id: str
    similarity: float
    age_days: float


# A statement of one text whatever the batch (the keys go in as arrays), answering ids only: a
# write's own text is usually new, and then this is all it costs, in the request's thread while
# the model computes the vectors (the ORM's query of every column of the memory and its scope
# took a millisecond of Python to build, and Python in this thread slows the model's pass).
_IDENTICAL_SQL = """
SELECT m.id, m.scope_id, m.content_hash FROM memories_memory m
WHERE m.valid AND m.scope_id = ANY(%s::bigint[]) AND m.content_hash = ANY(%s::text[])
"""


def identical_many(prepared: list[Prepared]) -> dict[tuple[int, str], Memory]:
    """Valid memories with the same normalized text in the same scope: one query, and one more
    for the memories themselves when there are any."""
    wanted = {p.key for p in prepared}
    with connection.cursor() as cursor:
        cursor.execute(
            _IDENTICAL_SQL,
            [
                sorted({scope_id for scope_id, _ in wanted}),
                sorted({digest for _, digest in wanted}),
            ],
        )
        ids = [pk for pk, scope_id, digest in cursor.fetchall() if (scope_id, digest) in wanted]
    if not ids:
        return {}
    found = Memory.objects.select_related("scope").filter(valid=True, id__in=ids)
    return {(m.scope_id, m.content_hash): m for m in found}


# The nearest on the search copy (memories.models.search): the scope, known only when the
# statement runs, prunes its partitions then; the memory is read by its id. The values are read
# only through `unnest`, each row's lateral search by its own scope and vector, so the plan made
# without them is the plan made with them: prepared once per connection with its generic plan
# kept (`zeromemory.core.prepared`), which saves planning it on every write (0.3 of its 0.7 ms
# bare at 2,000 memories). The ids left out (`besides`) too: sent whole (no preparing behind a
# pooler) as a constant array, the planner weighed each id for each partition (14 ms more
# planning for 64 ids, the same rows found). The order is said, not left to the join the
# planner picks: the nearest of each text first.
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
ORDER BY q.i, n.distance
"""


def near_many(
    prepared: dict[int, Prepared], *, besides: Collection[int] = ()
) -> dict[int, list[SimilarMemory]]:
    """Near duplicates for several new memories in one round trip, among the memories stored
    before them: `besides` names the rows their own batch inserted already (by id)."""
    if not prepared:
        return {}
    with connection.cursor() as cursor:
        execute_prepared(cursor, *near_statement(prepared, besides=besides), generic=True)
        return near_found(prepared, cursor.fetchall())


def near_then(
    prepared: dict[int, Prepared],
    *,
    besides: Collection[int] = (),
    then: Sequence[tuple[str, Sequence[Any]]],
    inserting: Collection[int],
    commit: bool = False,
) -> tuple[dict[int, list[SimilarMemory]], list[list[tuple]]]:
    """`near_many`, and the statements `then` (the inserts of these memories, whose ids are
    `inserting`), the lookup not seeing them. Returns the near duplicates and the rows each
    statement of `then` that answers rows answered.

    In a transaction of the caller's own, the lookup goes on another connection while this one
    runs the inserts (`zeromemory.core.beside`): the search's graph walk and the new vector's
    graph insert run on two cores at once. The lookup leaves the inserted ids out, so it does
    not see them even once they are committed; where it fails, it runs here afterwards.
    `commit`: then the inserts' message commits the transaction too (`execute_then`), the
    caller having nothing left to write in it. Otherwise (inside a caller's transaction) the
    lookup goes first in the inserts' message: one round trip, and no commit."""
    if not beside.alone(connection):
        sql, params = near_statement(prepared, besides=besides)
        with connection.cursor() as cursor:
            near, *answered = execute_then(cursor, sql, params, generic=True, then=then)
        return near_found(prepared, near), answered
    besides = [*besides, *inserting]
    lookup = beside.Beside(*near_statement(prepared, besides=besides), generic=True)
    (first, values), *rest = then
    with connection.cursor() as cursor:
        answered = execute_then(cursor, first, values, generic=True, then=rest, commit=commit)
    try:
        near = lookup.rows()
    except DatabaseError:
        return near_many(prepared, besides=besides), answered
    return near_found(prepared, near), answered


def near_statement(
    prepared: dict[int, Prepared], *, besides: Collection[int] = ()
) -> tuple[str, list[Any]]:
    """The lookup's text and values (`zeromemory.core.prepared`, its generic plan)."""
    indexes = list(prepared)
    scope_ids = [prepared[i].scope.id for i in indexes]
    vectors = [prepared[i].derived.embedded.literal for i in indexes]  # the insert's too
    return _NEAR_SQL, [indexes, scope_ids, vectors, list(besides)]


def near_found(
    prepared: dict[int, Prepared], rows: Sequence[tuple]
) -> dict[int, list[SimilarMemory]]:
    """The lookup's rows as each text's near duplicates (cosine >= the threshold)."""
    threshold = settings.NEAR_DUPLICATE_SIMILARITY
    now = timezone.now()
    similar: dict[int, list[SimilarMemory]] = {i: [] for i in prepared}
    for index, public_id, distance, created in rows:
        if 1.0 - distance >= threshold:
            similar[index].append(
                SimilarMemory(
                    id=public_id,
                    similarity=1.0 - distance,
                    age_days=round((now - created).total_seconds() / 86400, 2),
                )
            )
    return similar
