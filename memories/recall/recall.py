"""recall(): hybrid search over the memories an actor may read, in two SQL statements.

Two legs, each keeping its best 10·k candidates among valid memories in the readable scopes:

- vector: cosine distance over the memory embeddings and over the window embeddings of long
  memories (HNSW), collapsed to the best distance per memory, so text near the end of a long
  memory is found through its window;
- full text: the positive terms of `websearch_to_tsquery('english', query)`. Rows matching all
  of them and rows matching any of them (up to 300 rows per term) take part together. A row's
  text weight is the summed idf of the terms it matches, idf as BM25 has it, counted among the
  readable rows only, so memories in other scopes never change a rank; its coverage is that sum
  over the idf of all the query's terms (1 for a row matching the whole query). A rare
  identifier lifts its memory; a common word shared with many memories says little. The pool
  is scored from the per-term row lists, then its best 3·(10·k) rows are checked against every
  term, so which rows of a very common term the lists held never decides a rank.

The legs are fused by their own scores, each scaled among this query's candidates: the vector
score is the cosine distance placed between the nearest and the farthest vector candidate (1 for
the nearest), the text score is the weight over the best row's, times coverage^1.5; they are
weighted 1 : 5 and divided by 6, so a memory first in both legs scores 1. Reciprocal rank fusion
threw away how far ahead a leg's first rows are, which is what the full-text weight knows about
rare terms. The fused score is then multiplied by the kind's weight, an age decay
0.5^(age / half-life), both from the MemoryKind catalogue, and the usage boost.

The full-text leg needs no vector, so it is its own statement, run on the request's connection
while the model embeds the query (with the query's entities and the unknown-name signal); the
second statement takes its rows as values beside the vector: the vector leg, the fusion and the
answer. Split so, the text leg's 3 to 6 ms of the database's time overlap the model's pass
instead of following it (docs/benchmarks.md). `statement.py` holds the statements, their
fragments and the tuning; `inputs.py` the request it answers;
bench/locomo.py --ablation measures each part against the earlier variants in bench/.

The query is embedded and matched exactly as it arrived: no trimming, normalising or translating,
and no LLM call. The scopes come from `scopes.access`; the SQL only ever sees their ids.

HNSW and filters: an HNSW scan returns its `ef_search` nearest rows and stops, so a scope or kind
filter applied afterwards could leave fewer than 4·k. pgvector's iterative scan keeps walking the
graph until the LIMIT is met (bounded by `hnsw.max_scan_tuples`). `relaxed_order` is the cheap
mode; the legs re-sort their candidates by distance anyway. The settings are `SET LOCAL` in the
same simple-protocol message as the query: PostgreSQL runs a multi-statement message as one
implicit transaction, so they cost no extra round trip and never leak into the pooled connection
(inside a caller's transaction they last until its end). JIT is off for the statements: a plan
cost can cross `jit_above_cost`, and compiling would take longer than the whole search.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connections, router
from pydantic import Field

from memories.entities.dictionary import query_keys
from memories.models import ActivityOperation, ActivityOutcome, Memory
from memories.recall import entity_steps, query_vector, relevance, sessions
from memories.recall.budget import tokens_in
from memories.recall.inputs import (
    DEFAULT_K,
    MODES,
    RecallRequest,
    ScopeSelection,
    logged_read,
    select_scopes,
    validate_kinds,
)
from memories.recall.statement import (
    IDF_ROW_LIMIT,
    MIN_EF_SEARCH,
    PRODUCT,
    TextFound,
    Tuning,
    rows_statement,
)
from memories.schemas import HitOut, RecallOut
from zeromemory.core import prepared
from zeromemory.core.actor import Actor
from zeromemory.core.sql import vector_literal


class Hit(HitOut):
    """A recall answer row, with what the read path needs and never shows: the memory's primary
    key (for the recall counts), its full-text coverage and conversations (for the floor and the
    same-conversation lift), and whether the lift moved it."""

    pk: int = Field(exclude=True, repr=False)
    coverage: float = Field(default=0.0, exclude=True, repr=False)
    conversations: list[str] = Field(default_factory=list, exclude=True, repr=False)
    # The query names something no readable memory mentions (the query's, relevance.py).
    unknown_name: bool = Field(default=False, exclude=True, repr=False)
    lifted: bool = Field(default=False, exclude=True, repr=False)
    # It mentions a rare entity the query names; the entity lift moved it; the expansion added
    # it (or raised it) as a neighbour of a strong hit (entity_steps.py).
    entity_match: bool = Field(default=False, exclude=True, repr=False)
    entity_named: bool = Field(default=False, exclude=True, repr=False)  # rare or common
    entity_about: str = Field(default="", exclude=True, repr=False)  # the query's, it mentions
    entity_lifted: bool = Field(default=False, exclude=True, repr=False)
    expanded: bool = Field(default=False, exclude=True, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


NOTHING_RELEVANT_NOTICE = (
    "Nothing relevant found: no memory you can read is close enough in meaning to the query or "
    "matches enough of its words. Do not rely on memory for this; to see the nearest memories "
    "anyway, recall again with nearest: true."
)
NEAREST_NOTICE = (
    "Nothing relevant found: these are the nearest memories, answered because you asked for "
    "them (nearest: true); none is close enough to the query to rely on."
)


@dataclass
class Found:
    """What search() found: the hits (best first), and what its steps did, for the answer and
    the activity row."""

    hits: list[Hit]
    below_floor: int = 0  # candidates among the k best that the floor left out
    nothing_relevant: bool = False  # no candidate passed the floor

    def answer(self, query: str) -> RecallOut:
        """The answer of recall, REST's and MCP's alike, repeating the query exactly as sent."""
        notice = None
        if self.nothing_relevant:
            notice = NEAREST_NOTICE if self.hits else NOTHING_RELEVANT_NOTICE
        return RecallOut(
            query=query,
            results=self.hits,
            nothing_relevant=self.nothing_relevant,
            notice=notice,
        )

    def steps(self) -> dict[str, Any]:
        """The steps that shaped the answer, as the activity row keeps them: the floor when it
        left something out (or found nothing relevant), each lift when it moved a hit that was
        answered, the expansion when a memory it added was."""
        steps: dict[str, Any] = {}
        if self.below_floor or self.nothing_relevant:
            steps["floor"] = {"below": self.below_floor, "nothing_relevant": self.nothing_relevant}
        lifted = [hit.id for hit in self.hits if hit.lifted]
        if lifted:
            steps["session"] = {"lifted": lifted}
        entity_lifted = [hit.id for hit in self.hits if hit.entity_lifted]
        if entity_lifted:
            steps["entities"] = {"lifted": entity_lifted}
        added = [hit.id for hit in self.hits if hit.expanded]
        if added:
            steps["expansion"] = {"added": added}
        return steps


def ef_search_for(candidates: int) -> int:
    return max(MIN_EF_SEARCH, candidates)


# Counts of scopes that hold many rows are kept a minute per process: counting is the cost
# there (up to 10,000 index entries, 3 to 4 ms of the database's time per recall; 1.5 ms a round
# trip at 2,000 rows, about 1 at 1,000), and a count a minute old moves an idf or the vector
# leg's path by nothing that matters. Smaller scopes are cheap to count and counted every time
# (so a scope that just grew is seen at once: there a few rows move an idf).
ROWS_CACHE_SECONDS = 60.0
ROWS_CACHE_FROM = 1000
_ROWS_CACHE_ENTRIES = 10_000
_rows_cache: dict[tuple[tuple[int, ...], tuple[str, ...]], tuple[float, int]] = {}
_rows_lock = threading.Lock()


def readable_rows(selection: ScopeSelection, kinds: list[str] | None) -> int:
    """How many valid memories the scopes hold (of these kinds), counted up to IDF_ROW_LIMIT."""
    key, now = (tuple(sorted(selection.ids)), tuple(sorted(kinds or ()))), time.monotonic()
    cached = _rows_cache.get(key)
    if cached is not None and cached[0] > now:
        return cached[1]
    sql = rows_statement(scopes=selection.array, kinds=bool(kinds))
    with connections[router.db_for_read(Memory)].cursor() as cursor:
        cursor.execute(sql, [*([kinds] if kinds else []), IDF_ROW_LIMIT])
        rows = int(cursor.fetchone()[0])
    if rows >= ROWS_CACHE_FROM:
        with _rows_lock:
            if len(_rows_cache) >= _ROWS_CACHE_ENTRIES:
                _rows_cache.clear()
            _rows_cache[key] = (now + ROWS_CACHE_SECONDS, rows)
    return rows


def search(
    *,
    query: str,
    selection: ScopeSelection,
    kinds: list[str] | None = None,
    k: int = DEFAULT_K,
    mode: str = "hybrid",
    tuning: Tuning = PRODUCT,
    as_of: datetime | None = None,
    nearest: bool = False,
) -> list[Hit]:
    """The hits of `search_found` (the bench's and tests' shorthand)."""
    return search_found(
        query=query,
        selection=selection,
        kinds=kinds,
        k=k,
        mode=mode,
        tuning=tuning,
        as_of=as_of,
        nearest=nearest,
    ).hits


def search_found(
    *,
    query: str,
    selection: ScopeSelection,
    kinds: list[str] | None = None,
    k: int = DEFAULT_K,
    mode: str = "hybrid",
    tuning: Tuning = PRODUCT,
    as_of: datetime | None = None,
    nearest: bool = False,
    vector: query_vector.QueryVector | None = None,
) -> Found:
    """The hybrid search itself, for callers that validated and will log (recall, context):
    the statements' candidates, the same-conversation lift (`sessions.py`), then the relevance
    floor (`relevance.py`), which leaves out the candidates below it unless `nearest` asks for
    the k nearest anyway (each still marked `relevant` or not).

    `tuning` is the product's unless a bench compares variants (bench/locomo.py --ablation),
    which may switch the lift and the floor off.
    `as_of`: the memories valid at that instant, as they read then; the idf row count stays
    today's (it only scales term weights).
    `vector`: the query's vector begun by the caller (`query_vector.begin`), which had other
    work to do meanwhile; without it, it is begun here, and computed while the row count is
    read and the text statement runs.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if mode == "fulltext":
        vector = None
    elif vector is None:
        vector = query_vector.begin(query)
    rows = rows_held = readable_rows(selection, kinds)
    lift = tuning.session_lift and mode == "hybrid"
    entity_lift = tuning.entity_lift and mode == "hybrid"
    expand = tuning.expansion and mode == "hybrid" and as_of is None
    pool = k + sessions.EXTRA_CANDIDATES if lift or entity_lift else k
    # The query's dictionary keys, matched against the aliases inside the text statement.
    keys, plain = query_keys(query) if entity_lift else ([], [])
    statements = tuning.statements(
        scopes=selection.array,
        kinds=bool(kinds),
        mode=mode,
        k=k,
        rows=rows,
        as_of=as_of is not None,
    )
    # Each planned once per connection and text: the values are read through the statement's
    # materialized `input`, so they cannot change its plan (zeromemory.core.prepared).
    connection = connections[router.db_for_read(Memory)]
    text = TextFound()
    if statements.text is not None:
        # The full-text leg and the query's entities while the model computes the vector.
        text_params = [query, kinds, as_of, relevance.query_names(query), keys, plain]
        with connection.cursor() as cursor:
            prepared.execute(cursor, statements.text, text_params, generic=True)
            text = TextFound(*cursor.fetchone())
    # The vector last: everything above ran while the model computed it.
    query_embedding = vector.result() if vector is not None else None
    vector_param = vector_literal(query_embedding) if query_embedding is not None else None
    ef_search = ef_search_for(tuning.vector_depth * k)
    params = [ef_search, vector_param, kinds, as_of, *text.values, pool]
    with connection.cursor() as cursor:
        prepared.execute(cursor, statements.rank, params, generic=True)
        rows = cursor.fetchall()
    candidates = [
        Hit(
            pk=pk,
            id=public_id,
            content=content,
            kind=kind,
            scope=scope,
            score=float(score),
            similarity=None if similarity is None else round(float(similarity), 4),
            fts_matched=fts_matched,
            age_days=round(float(age_days), 2),
            has_original=has_original,
            stale=stale,
            coverage=float(coverage or 0.0),
            conversations=list(conversations or ()),
            unknown_name=bool(unknown_name),
            entity_match=entity_match == 2,
            entity_named=entity_match >= 1,
            entity_about=entity_about or "",
            disputed=disputed,
        )
        for (
            pk,
            public_id,
            content,
            kind,
            scope,
            score,
            similarity,
            fts_matched,
            age_days,
            has_original,
            stale,
            coverage,
            conversations,
            unknown_name,
            entity_match,
            entity_about,
            disputed,
        ) in rows
    ]
    # A leg alone (the bench's and tests' modes) lacks the other's signal: no floor there.
    if mode == "hybrid":
        signals = [
            relevance.Signals(
                similarity=hit.similarity or 0.0,
                coverage=hit.coverage,
                unknown_name=hit.unknown_name,
                entity_match=hit.entity_match,
            )
            for hit in candidates
        ]
        for hit, relevant in zip(candidates, relevance.relevant_hits(signals), strict=True):
            hit.relevant = relevant
    if entity_lift:
        candidates = entity_steps.lift_named_entities(candidates)
    if lift:
        candidates = sessions.lift_same_conversation(candidates)
    if expand and query_embedding is not None:
        candidates = expanded(
            candidates,
            k=k,
            selection=selection,
            rows=rows_held,
            vector=vector_param,
            kinds=kinds,
        )
    best = candidates[:k]
    if tuning.relevance_floor and not nearest and mode == "hybrid":
        # The k best of those that pass the floor: a relevant candidate ranked below noise (a
        # memory about the entity the query names, worded far from it) still answers.
        relevant = [hit for hit in candidates if hit.relevant]
        found = Found(hits=relevant[:k], nothing_relevant=not relevant)
        found.below_floor = sum(1 for hit in best if not hit.relevant)
        return found
    return Found(hits=best, nothing_relevant=not any(hit.relevant for hit in best))


def expanded(
    candidates: list[Hit],
    *,
    k: int,
    selection: ScopeSelection,
    rows: int,
    vector: str,
    kinds: list[str] | None,
) -> list[Hit]:
    """The candidates with the expansion's neighbours of the strong hits (entity_steps.py):
    a neighbour among the candidates below the k best is raised to its share of the hit it came
    with (when that is more), one from outside is added with that score; nothing is looked up
    when none could pass the k best (`entity_steps.settled`). `vector` is the query's vector as
    the statement's literal (`vector_literal`), made once per search."""
    strong = entity_steps.strong_hits(candidates)
    if not strong or entity_steps.settled(candidates, k=k, strong=strong):
        return candidates
    by_pk = {hit.pk: hit for hit in candidates}
    neighbours = entity_steps.expansion_rows(
        strong=[hit.pk for hit in strong],
        # Those the expansion could not raise: answered already, relevant, and above its share.
        shown=[
            hit.pk
            for hit in candidates[:k]
            if hit.relevant and hit.score >= entity_steps.ADDED_SHARE * strong[-1].score
        ],
        scopes=selection.array,
        rows=rows,
        vector=vector,
        kinds=kinds,
    )
    changed = False
    for (
        pk,
        public_id,
        content,
        kind,
        scope,
        hit_pk,
        linked,
        similarity,
        age_days,
        has_original,
        stale,
        disputed,
    ) in neighbours:
        similarity = float(similarity) if similarity is not None else 0.0
        # A link is someone's word that the two belong together; a shared entity is weaker.
        if not linked and similarity < entity_steps.ADDED_MIN_SIMILARITY:
            continue
        score = entity_steps.ADDED_SHARE * by_pk[hit_pk].score
        known = by_pk.get(pk)
        if known is not None:
            if known.score >= score:
                continue
            known.score, known.relevant, known.expanded = score, True, True
        else:
            candidates.append(
                Hit(
                    pk=pk,
                    id=public_id,
                    content=content,
                    kind=kind,
                    scope=scope,
                    score=score,
                    similarity=round(similarity, 4),
                    fts_matched=False,
                    age_days=round(float(age_days), 2),
                    has_original=has_original,
                    stale=stale,
                    disputed=disputed,
                    expanded=True,
                )
            )
        changed = True
    return sorted(candidates, key=lambda hit: -hit.score) if changed else candidates


def recall(
    *,
    actor: Actor,
    query: str,
    scopes: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    k: int = DEFAULT_K,
    mode: str = "hybrid",
    as_of: str | datetime | None = None,
    nearest: bool = False,
) -> list[Hit]:
    """The k best valid memories for the query among the scopes the actor may read (the
    relevant ones only, unless `nearest` asks for the nearest anyway).

    For in-process callers (the dashboard, the bench): the arguments are checked here by the
    request model the doors use (`RecallRequest`). `scopes` narrows the search (each must be
    readable: 404 otherwise); `kinds` filters by kind; `mode` picks both legs (the default) or
    one of them (the bench compares them); `as_of` (an ISO 8601 instant with its offset) asks
    for the memories valid then, with the text they had then, in the scopes the actor may read
    now.
    """
    arguments = {
        "query": query,
        "scopes": scopes,
        "kinds": kinds,
        "k": k,
        "as_of": as_of,
        "nearest": nearest,
    }
    return answer_recall(actor=actor, arguments=arguments, mode=mode).hits


def answer_recall(
    *,
    actor: Actor,
    arguments: Mapping[str, Any] | RecallRequest,
    mode: str = "hybrid",
    started: query_vector.QueryVector | None = None,
) -> Found:
    """recall for the arguments as a door received them (a REST body, MCP tool arguments) or
    as `recall` passes them: parsed once, here, by `RecallRequest`. Every call, refused ones
    included, writes one activity row; a recall that found nothing relevant is logged as empty
    (the insights' queries that found nothing), the nearest it answered anyway included.
    `started`: the query's pass begun before the checks (`memories.api.early_pass`)."""
    with logged_read(
        actor=actor,
        operation=ActivityOperation.RECALL,
        model=RecallRequest,
        request=arguments,
        query_field="query",
        mode=mode,
    ) as (request, entry):
        kind_slugs = validate_kinds(request.kinds)
        # The model starts on the query now, and the scopes are checked while it computes the
        # vector (query_vector.py).
        vector = query_vector.begin(request.query, started=started) if mode != "fulltext" else None
        selection = select_scopes(actor=actor, scopes=request.scopes)
        found = search_found(
            query=request.query,
            selection=selection,
            kinds=kind_slugs,
            k=request.k,
            mode=mode,
            as_of=request.instant,
            nearest=request.nearest,
            vector=vector,
        )
        hits = found.hits  # each marked disputed or not by the statement that found it
        entry.record(
            scopes=selection.requested,
            searched_scopes=selection.ids,
            results=[{"id": hit.id, "score": hit.score} for hit in hits],
            recalled_ids=[hit.pk for hit in hits if hit.relevant],
            # Counted when the row is written, after the answer (most hits' texts are new to
            # this process's counts: 0.05 ms each), in one call that leaves the interpreter to
            # the caller's next request.
            tokens=lambda: tokens_in([hit.content for hit in hits]),
            outcome=ActivityOutcome.EMPTY if found.nothing_relevant else None,
            steps=found.steps(),
        )
    return found
