"""The query's vector, computed beside the read's work that does not need it.

A recall or a build_context waits on two things in turn: the model's pass over the query (8 to
12 ms for one short text) and the search's ranking statement, which needs the vector. The model
runs with one torch thread and releases the interpreter while it computes, so what comes before
that statement (the scopes' row count and the search's text statement, its full-text leg; for
build_context also the rules, the recent decisions and the open loops) runs on the request's
thread meanwhile, on the other core. `begin` is called once the request is authenticated, its
call counted by the rate limit and its arguments found valid; for a bearer that passed those
checks here lately, a middleware begins it before they run again, once the same request model
found the arguments valid (`memories.api.early_pass`). Its scopes are checked while the model runs
(their statement took half a millisecond before the pass could begin). A call asking
for a scope it may not read drops its vector unused: it made the model run on a text of its
own, as any caller who can read a scope could by recalling it, and under the same rate limit.

The helper threads touch no database: the statements stay on the request's thread and its
connection (and its transaction). A helper embeds on behalf of an interactive request, so it
never waits for the host's requests in flight (zeromemory.core.foreground), its own included.
"""

from __future__ import annotations

from concurrent.futures import Future

from memories import embeddings


class QueryVector:
    """The vector of a query, ready at once when this process embedded the same string lately
    (`embeddings.embed_query`'s cache), else being computed by a helper thread
    (`embeddings.run_ahead`)."""

    def __init__(self, query: str) -> None:
        self.query = query
        cache = embeddings.query_vectors()
        found = cache.get(query) if cache.entries else None
        self._future: Future[list[float]] | None = None
        self._vector = found
        if found is None:
            # Tokenized here: the helper, tokenizing beside this thread's own Python, would
            # wait for the interpreter at each step before its pass could start.
            given = embeddings.tokenized([query])
            self._future = embeddings.run_ahead(embeddings.embed_query, query, given=given)

    def drop(self) -> None:
        """Not needed after all (the request was refused): a pass not started yet does not
        start."""
        if self._future is not None:
            self._future.cancel()

    def result(self) -> list[float]:
        """The vector (waits for the helper's pass; its error, if any, is raised here)."""
        if self._vector is None:
            assert self._future is not None
            self._vector = self._future.result()
        return self._vector


def begin(query: str, *, started: QueryVector | None = None) -> QueryVector:
    """Start embedding the query exactly as it arrived; `.result()` when the vector is needed.
    `started`: the pass a middleware began before the request was checked
    (`memories.api.early_pass`), taken when it embeds this same string."""
    if started is not None and started.query == query:
        return started
    return QueryVector(query)
