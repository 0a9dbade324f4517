"""Recall's statements taken apart on the data set bench/scale.py keeps (`--keep`): for the same
questions as its recall requests, in the largest scope, across person 0's scopes or across the
admin's, the statements' planning and execution time and the time of their costly parts
(EXPLAIN (ANALYZE) per question, each question's first run: the vector leg over the memories'
HNSW graphs, the full-text leg's rows matching the whole query and its per-term rows); with
`--ef`, each candidate-list length (hnsw.ef_search) against an exact vector leg: how many of
the answer's top 10 stay the same, and the ranking statement's time.

    .venv/bin/python bench/scale_recall.py [--data-dir bench/.cache/scale] [--who person]
        [--queries 40] [--ef 100,200]

Run it after bench/scale.py has built a stage; it starts the kept data directory's PostgreSQL
and stops it again when it started it. The figures are a diagnosis, in-process and bare; the
headline is bench/scale.py's, over HTTP.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from _django import percentile, setup_for
from _recall_score import explained, search_statements
from scale import CACHE, Requests

# The statement's parts that grow with the data, by their CTE's name.
PARTS = {
    "vector leg (HNSW)": ("vec_memory", "vec_window"),
    "full text, whole query": ("fts_strict",),
    "full text, per term": ("fts_terms",),
}
K = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=CACHE)
    parser.add_argument("--who", choices=["one", "person", "admin"], default="person")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--ef", help="ef_search values to compare with an exact vector leg")
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    setup_for(data_dir)
    from zeromemory.embedded_db import ensure_running, stop_server

    server = ensure_running(data_dir)
    try:
        state = json.loads((data_dir / "state.json").read_text())
        state["history_ids"] = ["unused"]
        asks = Requests(state)
        questions = [next(asks.queries) for _ in range(args.queries)]
        selection = scopes_of(args.who, state)
        if args.ef:
            compare_ef(selection, questions, [int(ef) for ef in args.ef.split(",")])
        else:
            take_apart(selection, questions)
    finally:
        if server.started_here:
            stop_server(server.pgdata)


def scopes_of(who: str, state: dict):
    from django.contrib.auth import get_user_model

    from memories.recall.inputs import ScopeSelection
    from scopes.models import Membership, Scope

    if who == "one":
        return ScopeSelection(ids=(Scope.objects.get(public_id=state["largest"]).pk,), requested=[])
    user = get_user_model().objects.get(username="person-000" if who == "person" else "bench")
    ids = {Scope.objects.get(kind="personal", owner=user).pk}
    ids.update(Membership.objects.filter(user=user).values_list("scope_id", flat=True))
    return ScopeSelection(ids=tuple(sorted(ids)), requested=[])


def run(sql: str, params: list, explain: str = "") -> tuple[list, float]:
    """The statement's rows (or its plan, with `explain`) and the milliseconds it took."""
    return explained(sql, params, explain)


def cte_times(node: dict, found: dict[str, float]) -> None:
    name = node.get("Subplan Name", "")
    if name.startswith("CTE "):
        found[name[4:]] = node.get("Actual Total Time", 0.0) * node.get("Actual Loops", 1)
    for child in node.get("Plans", []):
        cte_times(child, found)


def take_apart(selection, questions: list[str]) -> None:
    columns: dict[str, list[float]] = {"planning": [], "execution": []}
    columns.update({part: [] for part in PARTS})
    for question in questions:
        found: dict[str, float] = {}
        planning = execution = 0.0
        # Both statements: the text leg's (run beside the model) and the ranking's.
        for sql, params in search_statements(selection, question, k=K):
            rows, _ = run(sql, params, explain="EXPLAIN (ANALYZE, FORMAT JSON) ")
            plan = rows[0][0]
            plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]
            cte_times(plan["Plan"], found)
            planning += plan["Planning Time"]
            execution += plan["Execution Time"]
        columns["planning"].append(planning)
        columns["execution"].append(execution)
        for part, names in PARTS.items():
            columns[part].append(sum(found.get(name, 0.0) for name in names))
    print(f"recall's statements over {len(selection.ids)} scopes, {len(questions)} questions:")
    print(f"  {'ms':28s} {'p50':>7s} {'p95':>7s}")
    for part, times in columns.items():
        print(f"  {part:28s} {statistics.median(times):7.1f} {percentile(times, 95):7.1f}")


def compare_ef(selection, questions: list[str], efs: list[int]) -> None:
    """Each ef_search against the answer with an exact vector leg (the same statement with the
    leg's index order turned into a sort, as the product's exact path does)."""
    same: dict[int, list[float]] = {ef: [] for ef in efs}
    took: dict[int, list[float]] = {ef: [] for ef in efs}
    for question in questions:
        sql, params = search_statements(selection, question, k=K)[1]  # the ranking statement
        exact = sql.replace("SET LOCAL enable_sort = off;", "").replace(
            "ORDER BY (m.embedding <=> (SELECT qv FROM input))\n",
            "ORDER BY (m.embedding <=> (SELECT qv FROM input)) + 0\n",
        )
        if exact == sql:
            raise SystemExit("these scopes hold few rows: the product's leg is exact already")
        reference, _ = run(exact, params)
        reference_ids = {row[0] for row in reference[:K]}
        for ef in efs:
            timings = []
            for _ in range(2):
                answer, ms = run(sql, [ef, *params[1:]])
                timings.append(ms)
            overlap = len({row[0] for row in answer[:K]} & reference_ids)
            same[ef].append(overlap / max(1, len(reference_ids)))
            took[ef].append(min(timings))
    print(f"ef_search over {len(selection.ids)} scopes, {len(questions)} questions:")
    for ef in efs:
        print(
            f"  ef_search {ef:4d}: top {K} the same as with an exact vector leg"
            f" {statistics.mean(same[ef]):.3f}; statement p50 {statistics.median(took[ef]):.1f}"
            f" ms, p95 {percentile(took[ef], 95):.1f} ms"
        )


if __name__ == "__main__":
    main()
