"""Recall's relevance floor on LoCoMo: questions asked in another conversation's scope get nothing,
questions asked in their own keep their evidence.

    .venv/bin/python bench/relevance.py [PATH] [--fresh] [--calibrate]

PATH and the loading are bench/locomo.py's (the same cached data directory under bench/.cache/,
or a new one with --fresh): every turn remembered over REST, one scope per conversation, each
LoCoMo session as the turns' conversation id. Then, through `POST /api/v1/recall` (k = 10) of a
real server:

- own scope: each scored question in its conversation's scope, with the floor (the product) and
  with `nearest: true` (the k nearest, as recall answered before the floor): recall@10 of both,
  and the share of questions answered empty;
- another conversation's scope: each question in the scope of the next conversation of the file
  (the last one's in the first's): the share answered empty, the floor's target being at least
  0.8 while own recall@10 drops by at most 0.01.

--calibrate also prints how the floor was chosen: in this process, through the server's search
function on the same database, the signals of each question's 10 nearest candidates (cosine,
full-text coverage) in its own scope and in the other one, then both figures for a grid of the
floor's numbers (`memories.recall.relevance.Floor`), the product's marked. The same-conversation
lift is off there, so the grid shows the floor alone.

bench/recall.py prints the labelled set's recall@10 with the floor ("hybrid") and without it
("hybrid, nearest anyway"): the other check that the floor loses no recall.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import time
from pathlib import Path

from _django import percentile, setup_for
from _locomo import Question, load_conversations
from _server import Api, served
from locomo import DEFAULT_DATA, analyze, data_dir_for, issue_token, load


def other_scope(loaded: dict) -> dict[str, str]:
    """Each conversation's neighbour: the next one in the file, the last one's the first."""
    names = list(loaded)
    return {name: loaded[names[(i + 1) % len(names)]]["scope"] for i, name in enumerate(names)}


def asked(api: Api, questions: list[Question], scope_of: dict[str, str], **options):
    """Each question as one recall (k = 10) in the scope `scope_of` names for its conversation:
    the ids answered, and the latencies."""
    answers: list[list[str]] = []
    latencies: list[float] = []
    for question in questions:
        body = {"query": question.text, "scopes": [scope_of[question.conversation]], "k": 10}
        started = time.perf_counter()
        status, answer = api.call("POST", "/api/v1/recall", {**body, **options})
        latencies.append((time.perf_counter() - started) * 1000)
        assert status == 200, answer
        assert answer["nothing_relevant"] == (not any(h["relevant"] for h in answer["results"]))
        answers.append([hit["id"] for hit in answer["results"]])
    return answers, latencies


def recall_at_10(questions: list[Question], answers: list[list[str]], loaded: dict) -> float:
    shares = []
    for question, ids in zip(questions, answers, strict=True):
        memory_of = loaded[question.conversation]["memory_of"]
        wanted = {memory_of[dia_id] for dia_id in question.evidence}
        shares.append(len(wanted & set(ids[:10])) / len(wanted))
    return statistics.fmean(shares)


def empty_share(answers: list[list[str]]) -> float:
    return sum(not ids for ids in answers) / len(answers)


def candidates(questions: list[Question], loaded: dict, scope_of: dict[str, str]):
    """Per question: (similarity, coverage, unknown name, is evidence) of its 10 nearest
    candidates in the scope `scope_of` names, through the server's search function, floor and
    lift off."""
    from dataclasses import replace

    from memories.recall.recall import ScopeSelection, search
    from memories.recall.statement import PRODUCT
    from scopes.models import Scope

    pk_of = dict(Scope.objects.values_list("public_id", "id"))
    tuning = replace(PRODUCT, session_lift=False, relevance_floor=False)
    found = []
    for question in questions:
        selection = ScopeSelection(ids=(pk_of[scope_of[question.conversation]],), requested=[])
        hits = search(query=question.text, selection=selection, k=10, tuning=tuning)
        memory_of = loaded[question.conversation]["memory_of"]
        wanted = {memory_of[dia_id] for dia_id in question.evidence}
        found.append(
            (
                [(h.similarity or 0.0, h.coverage, h.unknown_name, h.id in wanted) for h in hits],
                wanted,
            )
        )
    return found


def calibrate(questions: list[Question], loaded: dict) -> None:
    from memories.recall.relevance import (
        HIT_FLOOR,
        NAMED_QUERY_FLOOR,
        QUERY_FLOOR,
        Floor,
        Signals,
        relevant_hits,
    )

    own = candidates(questions, loaded, {name: s["scope"] for name, s in loaded.items()})
    cross = candidates(questions, loaded, other_scope(loaded))
    for name, found in (("another conversation's scope", cross), ("its own scope", own)):
        best = [max((c[0] for c in hits), default=0.0) for hits, _ in found]
        cells = ", ".join(f"p{p} {percentile(best, p):.3f}" for p in (10, 50, 90))
        named = statistics.fmean(bool(hits) and hits[0][2] for hits, _ in found)
        print(f"  in {name}: best cosine {cells}; {named:.3f} name something unknown there")

    def figures(floors: tuple[Floor, Floor, Floor]) -> tuple[float, float]:
        """The share of cross questions with nothing relevant, and own recall@10 kept."""
        query_floor, named_query_floor, hit_floor = floors

        def relevant(hits) -> list[bool]:
            signals = [Signals(similarity=s, coverage=c, unknown_name=n) for s, c, n, _ in hits]
            return relevant_hits(
                signals,
                query_floor=query_floor,
                named_query_floor=named_query_floor,
                hit_floor=hit_floor,
            )

        empty = statistics.fmean(not any(relevant(hits)) for hits, _ in cross)
        kept = statistics.fmean(
            sum(1 for hit, r in zip(hits, relevant(hits), strict=True) if hit[3] and r)
            / len(wanted)
            for hits, wanted in own
        )
        return empty, kept

    unfloored = statistics.fmean(
        sum(1 for *_, evidence in hits if evidence) / len(wanted) for hits, wanted in own
    )
    product = (QUERY_FLOOR, NAMED_QUERY_FLOOR, HIT_FLOOR)
    print(f"  own recall@10 without a floor: {unfloored:.3f}")
    print(f"  {'query':>13} {'named query':>13} {'hit':>13}   {'cross empty':>11} {'own R@10':>9}")
    print(f"  {'cos / cover':>13} {'cos / cover':>13} {'cos / cover':>13}")
    tried = [
        (Floor(plain, covered), Floor(named, covered), HIT_FLOOR)
        for plain, named, covered in itertools.product(
            (0.2, 0.25, 0.3, 0.35), (0.4, 0.45, 0.5, 0.55), (0.4, 0.5, 0.6)
        )
    ] + [
        (QUERY_FLOOR, NAMED_QUERY_FLOOR, Floor(similar, covered))
        for similar, covered in itertools.product((0.2, 0.25, 0.3, 0.35), (0.1, 0.2, 0.3))
    ]
    for floors in tried:
        empty, kept = figures(floors)
        if (empty < 0.8 or unfloored - kept > 0.02) and floors != product:
            continue  # far from the target: not worth a line
        cells = " ".join(f"{f.similar:6.2f} {f.covered:6.2f}" for f in floors)
        mark = "  <- the product's" if floors == product else ""
        print(f"  {cells}   {empty:11.3f} {kept:9.3f}{mark}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--fresh", action="store_true", help="load into a new data directory")
    parser.add_argument("--calibrate", action="store_true", help="also the floor's grid")
    args = parser.parse_args()
    conversations, questions = load_conversations(args.path)
    print(f"{args.path.name}: {len(conversations)} conversations, {len(questions)} questions")
    data_dir, cached = data_dir_for(args.path, args.fresh)
    try:
        with served(data_dir) as port:
            setup_for(data_dir)
            if cached:
                state = json.loads((data_dir / "loaded.json").read_text())
            else:
                token = issue_token()
                loaded = load(Api(port, token), conversations)
                analyze()
                state = {"token": token, "loaded": loaded}
                (data_dir / "loaded.json").write_text(json.dumps(state))
            loaded = state["loaded"]
            api = Api(port, state["token"])
            own_scope = {name: s["scope"] for name, s in loaded.items()}
            asked(api, questions[:20], own_scope)  # warm up: model, plans, buffers
            floored, latencies = asked(api, questions, own_scope)
            nearest, _ = asked(api, questions, own_scope, nearest=True)
            crossed, _ = asked(api, questions, other_scope(loaded))
            before = recall_at_10(questions, nearest, loaded)
            after = recall_at_10(questions, floored, loaded)
            print()
            print("relevance floor on LoCoMo, k = 10, over REST")
            print(f"  another conversation's scope: {empty_share(crossed):.3f} answered empty")
            print(
                f"  own scope: recall@10 {after:.3f} with the floor, {before:.3f} with "
                f"nearest: true ({(after - before) * 100:+.1f} points); "
                f"{empty_share(floored):.3f} answered empty"
            )
            print(
                f"  recall over HTTP, own scope ({len(latencies)} requests): "
                f"p50 {percentile(latencies, 50):.2f} ms, p95 {percentile(latencies, 95):.2f} ms"
            )
            if args.calibrate:
                print()
                print("calibration (in-process, floor and lift off, 10 nearest per question)")
                calibrate(questions, loaded)
    finally:
        if args.fresh:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
