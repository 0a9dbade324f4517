"""The entity steps of recall: the entity lift and the bounded expansion, without an LLM.

What a memory is about (its entities, `memories.entities`) and how memories relate (their live
typed links) find what the query's words and meaning alone miss: the memory about the same person
or service worded otherwise, and the second memory a question needs.

- **the entity lift**: the statement matches the query, exactly as sent, against the readable
  scopes' entity names and aliases (one dictionary match inside the statement, no extra round
  trip; `statement.QUERY_ENTITIES`) and says of each candidate whether it mentions an entity the
  query names, a rare one (`Hit.entity_match`) or a common one only (`Hit.entity_named`). A
  candidate mentioning a rare one is relevant (the relevance floor's `Signals.entity_match`) and,
  bounded like the same-conversation lift, has its score multiplied by 1 + `LIFT`, for at most
  `MAX_LIFTED` candidates; one mentioning a common one only is lifted by 1 + `COMMON_LIFT` and
  stays subject to the floor (in a chat, the turns of the person the question names rather than
  the other's). Only the statement's rows are looked at (k + 20), never more;
- **the expansion**: the memories that share a rare entity or a live link with the strongest
  hits (the best `STRONG_HITS` that pass the floor and score at least `STRONG_SHARE` of the best)
  are candidates too, found by one more statement (`EXPANSION`), only when there are such hits
  and the k best are not settled already (`settled`: none of them could be passed).
  At most `MAX_ADDED` are taken, linked ones first, then the closest in meaning to the query,
  each scored `ADDED_SHARE` of the hit it came from (a candidate already found is raised to
  that, when it scored less), so it passes only the hits that scored less than that,
  never clearly better ones. They are valid memories of the readable scopes (and kinds) only;
  with `as_of` there is no expansion (links and mentions are today's).

A rare entity is one named by at most `statement.common_mentions(rows)` mentions: the speaker of
every turn of a chat or the team's own product names most memories and singles none out.
bench/locomo.py --ablation measures each step; the activity row's `steps` records which
contributed (`recall.Found.steps`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from django.db import connections, router

from memories.entities.names import MAX_MERGE_HOPS
from memories.models import Memory
from memories.recall.statement import AGE_DAYS, DISPUTED, STALE, common_mentions
from zeromemory.core import prepared

LIFT = 0.3
COMMON_LIFT = 0.3
MAX_LIFTED = 5
STRONG_HITS = 3
STRONG_SHARE = 0.5
MAX_ADDED = 3
ADDED_SHARE = 0.6
# A memory added through a shared entity still needs this cosine with the query: it came with a
# strong hit, but a memory about nothing the query asks is noise beside it. A linked one needs
# none: someone said the two belong together.
ADDED_MIN_SIMILARITY = 0.2


class Candidate(Protocol):
    pk: int
    score: float
    relevant: bool
    entity_match: bool
    entity_named: bool
    entity_lifted: bool


C = TypeVar("C", bound=Candidate)


def lift_named_entities(candidates: Sequence[C]) -> list[C]:
    """The candidates (best first) reordered by the entity lift, the lifted ones marked. A
    candidate that mentions a rare entity of the query is relevant whether lifted or not."""
    lifted = common = 0
    for candidate in candidates:
        if candidate.entity_match:
            candidate.relevant = True
            if lifted < MAX_LIFTED:
                candidate.score *= 1 + LIFT
                candidate.entity_lifted = True
                lifted += 1
        elif candidate.entity_named and COMMON_LIFT:
            candidate.score *= 1 + COMMON_LIFT
            common += 1
    if not lifted and not common:
        return list(candidates)
    return sorted(candidates, key=lambda c: -c.score)


def strong_hits(candidates: Sequence[C]) -> list[C]:
    """The hits the expansion follows: the best few that pass the floor, close to the best."""
    if not candidates:
        return []
    best = candidates[0].score
    return [c for c in candidates[:STRONG_HITS] if c.relevant and c.score >= STRONG_SHARE * best]


def settled(candidates: Sequence[C], *, k: int, strong: Sequence[C]) -> bool:
    """Whether the expansion cannot change the k best (best first), so its statement need not
    run: there are k of them, each relevant and scoring at least ADDED_SHARE of the best strong
    hit. A neighbour comes in, or a candidate is raised, at ADDED_SHARE of its hit's score at
    most, so it would rank after all k (at an equal score too: the sort is stable, and it comes
    from below them or from outside)."""
    if len(candidates) < k:
        return False
    least = ADDED_SHARE * strong[0].score
    return all(c.relevant and c.score >= least for c in candidates[:k])


# The neighbours of the strong hits (`strong`: their ids): the memories that mention a rare
# entity one of them mentions (resolved through its merges to their survivor, whose family's
# mentions count), or that a live link joins to one of them; valid, in the readable scopes, of
# the kinds asked, not among the answer already (`shown`); the closest to the query first. One
# statement. Its values (the ids, the query's vector, the kinds) are read only through the
# materialized `input`, as the search statement reads its own, so the plan made without them is
# the plan made with them and the connection keeps one generic plan (planning was 1 ms of its
# 2; EXPLAIN on bench/floor.py's data: the same plan either way, the same rows in the same order).
EXPANSION = """
WITH RECURSIVE input AS MATERIALIZED (
    SELECT %s::bigint[] AS strong, %s::bigint[] AS shown, %s::vector AS qv, %s::text[] AS kinds
),
strong AS MATERIALIZED (SELECT unnest((SELECT strong FROM input)) AS id),
shown AS MATERIALIZED (SELECT unnest((SELECT shown FROM input)) AS id),
up AS (
    SELECT DISTINCT s.id AS hit, e.id, e.merged_into_id AS next, 0 AS hops
    FROM strong s JOIN memories_entitymention x ON x.memory_id = s.id
    JOIN memories_entity e ON e.id = x.entity_id
    UNION ALL
    SELECT u.hit, e.id, e.merged_into_id, u.hops + 1
    FROM up u JOIN memories_entity e ON e.id = u.next WHERE u.hops < {hops}
),
roots AS MATERIALIZED (SELECT DISTINCT hit, id AS root FROM up WHERE next IS NULL),
family AS (
    SELECT r.root, r.root AS id, 0 AS hops FROM (SELECT DISTINCT root FROM roots) r
    UNION ALL
    SELECT f.root, e.id, f.hops + 1
    FROM family f JOIN memories_entity e ON e.merged_into_id = f.id WHERE f.hops < {hops}
),
rare AS MATERIALIZED (
    SELECT r.root FROM (SELECT DISTINCT root FROM roots) r
    WHERE (SELECT count(*) FROM (
        SELECT 1 FROM memories_entitymention x
        WHERE x.entity_id IN (SELECT f.id FROM family f WHERE f.root = r.root)
        LIMIT {common} + 1
    ) c) <= {common}
),
neighbours AS (
    SELECT x.memory_id AS id, ro.hit, 'entity' AS via
    FROM rare JOIN roots ro ON ro.root = rare.root
    JOIN family f ON f.root = rare.root
    JOIN memories_entitymention x ON x.entity_id = f.id
    UNION
    SELECT l.target_id, l.source_id, 'link' FROM memories_memorylink l
    WHERE l.source_id IN (SELECT id FROM strong) AND l.removed_at IS NULL
    UNION
    SELECT l.source_id, l.target_id, 'link' FROM memories_memorylink l
    WHERE l.target_id IN (SELECT id FROM strong) AND l.removed_at IS NULL
),
found AS (
    SELECT n.id, min(n.hit) AS hit, bool_or(n.via = 'link') AS linked
    FROM neighbours n
    WHERE n.id NOT IN (SELECT id FROM strong) AND n.id NOT IN (SELECT id FROM shown)
    GROUP BY n.id
)
SELECT m.id, m.public_id, m.content, m.kind_id, s.public_id, fd.hit, fd.linked,
       1 - least(
           m.embedding <=> (SELECT qv FROM input),
           (SELECT min(w.embedding <=> (SELECT qv FROM input))
            FROM memories_memorywindow w WHERE w.memory_id = m.id)
       ) AS similarity,
       {age} AS age_days, m.content_original <> '' AS has_original, {stale} AS stale,
       {disputed} AS disputed
FROM found fd
JOIN memories_memory m ON m.id = fd.id
JOIN scopes_scope s ON s.id = m.scope_id
JOIN memories_memorykind k ON k.slug = m.kind_id
WHERE m.valid AND m.scope_id = ANY({scopes}){kinds}
ORDER BY fd.linked DESC, similarity DESC NULLS LAST, m.id DESC
LIMIT {limit}
"""


def expansion_rows(
    *,
    strong: Sequence[int],
    shown: Sequence[int],
    scopes: str,
    rows: int,
    vector: str,
    kinds: list[str] | None,
) -> list[tuple]:
    """The neighbours of the strong hits (memory pks) that are not `shown` already, the closest
    to the query first (`vector`, its literal): one statement. `scopes` is the readable scopes'
    array literal (`ScopeSelection.array`), `rows` how many rows they hold."""
    sql = EXPANSION.format(
        common=common_mentions(rows),
        age=AGE_DAYS,
        stale=STALE,
        disputed=DISPUTED,
        scopes=scopes,
        kinds=" AND m.kind_id = ANY((SELECT kinds FROM input)::text[])" if kinds else "",
        limit=MAX_ADDED,
        hops=MAX_MERGE_HOPS,
    )
    params = [list(strong), list(shown), vector, kinds]
    with connections[router.db_for_read(Memory)].cursor() as cursor:
        # Planned once per connection and text: its values cannot change the plan (above).
        prepared.execute(cursor, sql, params, generic=True)
        return cursor.fetchall()
