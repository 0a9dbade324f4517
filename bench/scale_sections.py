"""The statements of the briefing's sections and the insights' never-recalled list, timed bare
on the data set bench/scale.py keeps (bench/.cache/scale/, `--keep`): EXPLAIN (ANALYZE, BUFFERS,
TIMING OFF), the median of `--runs` executions, in the largest scope and across person 0's
scopes; `--plans` prints the last plan of each.

    .venv/bin/python bench/scale_sections.py [--runs 9] [--plans]

Run it after bench/scale.py has built a stage; it starts the kept data directory's PostgreSQL
and stops it again when it started it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from datetime import UTC, timedelta

from _django import setup_for
from scale import CACHE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--plans", action="store_true")
    args = parser.parse_args()
    setup_for(CACHE)
    from zeromemory.embedded_db import ensure_running, stop_server

    server = ensure_running(CACHE)
    try:
        measure(args.runs, args.plans)
    finally:
        if server.started_here:
            stop_server(server.pgdata)


def measure(runs: int, plans: bool) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from memories.insights import quality
    from memories.models import ConflictStatus
    from memories.recall import sections
    from memories.recall.budget import SHARES
    from memories.recall.inputs import DEFAULT_TOKENS, ScopeSelection
    from scopes.models import Membership, Scope

    state = json.loads((CACHE / "state.json").read_text())
    largest = Scope.objects.get(public_id=state["largest"])
    person = get_user_model().objects.get(username="person-000")
    personal = Scope.objects.get(kind="personal", owner=person).pk
    person_scopes = [
        personal,
        *Membership.objects.filter(user=person).values_list("scope_id", flat=True),
    ]

    def explained(sql: str, params: object) -> float:
        times = []
        for _ in range(runs):
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) " + sql, params)
                plan = [row[0] for row in cursor.fetchall()]
            times.append(float(re.search(r"Execution Time: ([\d.]+)", plan[-1]).group(1)))
        if plans:
            print("\n".join(plan))
        return statistics.median(times)

    def statement(call) -> tuple[str, object]:
        seen = []
        with connection.execute_wrapper(
            lambda execute, sql, params, many, context: (
                seen.append((sql, params)) or execute(sql, params, many, context)
            )
        ):
            call()
        return seen[-1]

    important = sections.candidate_limit(
        DEFAULT_TOKENS * SHARES["focus"], per_row=25, lo=10, hi=400
    )
    loops = sections.candidate_limit(DEFAULT_TOKENS * SHARES["recent"], per_row=15, lo=5, hi=200)
    for label, ids in (
        (f"the largest scope ({largest.pk})", (largest.pk,)),
        (f"person 0's {len(person_scopes)} scopes", tuple(person_scopes)),
    ):
        selection = ScopeSelection(ids=ids, requested=[])
        for name, call in (
            ("briefing, important_rows", lambda s=selection: sections.important_rows(s, important)),
            ("recent decisions + open loops", lambda s=selection: sections.loop_rows(s, loops)),
        ):
            print(f"{name}, {label}: {explained(*statement(call)):.1f} ms", flush=True)
    now = timezone.now()
    params = {
        "scope": largest.pk,
        "length": quality.LIST_LENGTH,
        "cutoff": now - timedelta(days=quality.NEVER_RECALLED_DAYS),
        "recent": now.astimezone(UTC).date() - timedelta(days=quality.NEVER_RECALLED_DAYS - 1),
        "open": ConflictStatus.OPEN.value,
    }
    ms = explained(quality._NEVER_RECALLED, params)
    print(f"insights, never recalled, the largest scope: {ms:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
