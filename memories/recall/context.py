"""build_context() and briefing(): what an agent should know before it starts, within a budget.

Three sections, each with a share of the token budget:

0. the approved rules of the scopes (`[rule]`), when there are any, within at most half the
   budget; the sections below share what they leave;
1. the memories relevant to the topic (recall's hits above its relevance floor, `relevance.py`),
   or, for a briefing without a topic, the most important ones: kind weight x age
   decay x a recall-frequency factor;
2. decisions and conventions from the last two weeks, newest first;
3. open loops: tasks and open questions, oldest first (the longest-waiting first).

Tokens are counted with the embedding model's own WordPiece tokenizer (bundled, offline). Every
line of the markdown is a whole number of tokens and lines are joined by whitespace, which that
tokenizer never turns into a token, so the markdown's count is the sum of its lines' counts and
is taken as that sum (a tokenizer whose counts do not add up that way counts the final markdown
again); the budget is never exceeded. A row that does not fit whole is cut at a token boundary
and marked truncated. Budget a section leaves unused goes to the next one, and what is left at
the end goes back to the sections that had more to show. A memory shows up once, in the first
section that has it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from memories.models import ActivityOperation, ActivityOutcome
from memories.recall import query_vector
from memories.recall.budget import (
    SHARES,
    Candidate,
    Context,
    Section,
    assemble,
)
from memories.recall.inputs import (
    DEFAULT_TOKENS,
    BriefingRequest,
    ContextRequest,
    logged_read,
    select_scopes,
)
from memories.recall.recall import search_found
from memories.recall.sections import (
    candidate_limit,
    important_rows,
    other_sections,
    sections_after,
)
from memories.selectors import disputed
from zeromemory.core.actor import Actor


def build_context(
    *,
    actor: Actor,
    topic: str,
    max_tokens: int = DEFAULT_TOKENS,
    scopes: Sequence[str] | None = None,
    as_of: str | datetime | None = None,
) -> Context:
    """Context for an agent about to work on `topic`, in at most `max_tokens` tokens; with
    `as_of`, from the memories valid at that instant as they read then. For in-process
    callers: the arguments are checked here by the model the doors use (`ContextRequest`)."""
    arguments = {"topic": topic, "max_tokens": max_tokens, "scopes": scopes, "as_of": as_of}
    return answer_context(actor=actor, arguments=arguments)


def answer_context(
    *,
    actor: Actor,
    arguments: Mapping[str, Any] | ContextRequest,
    started: query_vector.QueryVector | None = None,
) -> Context:
    """build_context for the arguments as a door received them (a REST body, MCP tool
    arguments) or as `build_context` passes them: parsed once, here, by `ContextRequest`.
    Every call, refused ones included, writes one activity row. `started`: the topic's pass
    begun before the checks (`memories.api.early_pass`)."""
    with logged_read(
        actor=actor,
        operation=ActivityOperation.BUILD_CONTEXT,
        model=ContextRequest,
        request=arguments,
        query_field="topic",
    ) as (request, entry):
        topic, max_tokens, instant = request.topic, request.max_tokens, request.instant
        # The model embeds the topic while the scopes are checked, the other sections read and
        # which of their memories are disputed (query_vector.py); the search marks its own rows.
        vector = query_vector.begin(topic, started=started)
        selection = select_scopes(actor=actor, scopes=request.scopes)
        others = other_sections(selection, max_tokens, instant)
        around = [*others.rules, others.recent, others.open_loops]
        marked = disputed(c.pk for section in around for c in section.candidates)
        k = candidate_limit(max_tokens * SHARES["focus"], per_row=50, lo=5, hi=50)
        # The relevance floor leaves out what is not relevant to the topic (relevance.py).
        found = search_found(query=topic, selection=selection, k=k, as_of=instant, vector=vector)
        focus = Section(
            "relevant",
            _("Relevant to the topic"),
            SHARES["focus"],
            [
                Candidate(
                    hit.pk,
                    hit.id,
                    hit.kind,
                    hit.scope,
                    hit.content,
                    hit.age_days,
                    hit.score,
                    stale=hit.stale,
                    group=hit.entity_about,
                )
                for hit in found.hits
            ],
        )
        context = assemble(
            title=_("Context"),
            topic=topic,
            max_tokens=max_tokens,
            sections=others.around(focus),
            disputed_ids=marked | {hit.pk for hit in found.hits if hit.disputed},
        )
        # Only the rows found for the topic count as recalled.
        recalled = [row.candidate.pk for row in focus.rows]
        entry.record(
            scopes=selection.requested,
            searched_scopes=selection.ids,
            results=context.result_ids(),
            recalled_ids=recalled,
            tokens=context.tokens,
            # Nothing relevant to the topic is a query that found nothing, whatever the other
            # sections (rules, recent decisions, open loops) still show.
            outcome=ActivityOutcome.EMPTY if found.nothing_relevant else None,
            steps=found.steps(),
        )
    return context


def briefing(
    *,
    actor: Actor,
    max_tokens: int = DEFAULT_TOKENS,
    scopes: Sequence[str] | None = None,
    as_of: str | datetime | None = None,
) -> Context:
    """A session-start briefing: build_context without a topic.

    Its rows do not bump recall counts: the briefing ranks by them, and counting its own
    answers would keep the same memories on top forever.
    """
    arguments = {"max_tokens": max_tokens, "scopes": scopes, "as_of": as_of}
    return answer_briefing(actor=actor, arguments=arguments)


def answer_briefing(*, actor: Actor, arguments: Mapping[str, Any] | BriefingRequest) -> Context:
    """briefing for the arguments as a door received them (a REST query string parsed by
    `BriefingRequest.parse_query`, MCP tool arguments) or as `briefing` passes them: parsed
    once, here, by `BriefingRequest`. Every call, refused ones included, writes one row."""
    with logged_read(
        actor=actor,
        operation=ActivityOperation.BRIEFING,
        model=BriefingRequest,
        request=arguments,
    ) as (request, entry):
        max_tokens, instant = request.max_tokens, request.instant
        selection = select_scopes(actor=actor, scopes=request.scopes)
        limit = candidate_limit(max_tokens * SHARES["focus"], per_row=25, lo=10, hi=400)
        focus = Section(
            "important",
            _("Most important"),
            SHARES["focus"],
            important_rows(selection, limit, instant),
        )
        context = assemble(
            title=_("Session briefing"),
            topic=None,
            max_tokens=max_tokens,
            sections=sections_after(focus, selection, max_tokens, instant),
        )
        entry.record(
            scopes=selection.requested,
            searched_scopes=selection.ids,
            results=context.result_ids(),
            tokens=context.tokens,
        )
    return context
