"""How well a scope answers the questions its agents ask: the caller gives questions with the
memory ids that should answer each, and gets recall@k and MRR on the scope as it is now, with
the misses. Each question is one recall, run exactly as the read path runs it (embedded as sent,
never translated, the relevance floor applied, no LLM) and logged as the read it is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.translation import gettext as _

from memories.models import Memory
from memories.recall.inputs import MAX_K
from memories.recall.recall import recall
from scopes.models import Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError, ValidationFailed

MAX_CASES = 50
MAX_EXPECTED = 20


@dataclass(frozen=True)
class Case:
    question: str
    expected_ids: Sequence[str]


@dataclass
class CaseResult:
    question: str
    expected_ids: list[str]
    found_ids: list[str]  # the recall's answer, in rank order
    recall: float  # share of the expected memories in the top k
    reciprocal_rank: float  # 1 / rank of the first expected memory found (0: none)
    missed: list[str]  # expected memories not in the top k


@dataclass
class Benchmark:
    scope: Scope
    k: int
    recall_at_k: float
    mrr: float
    cases: list[CaseResult]


def _check(scope: Scope, cases: Sequence[Case], k: int) -> None:
    if not cases:
        raise ValidationFailed("cases", _("Give at least one question."))
    if len(cases) > MAX_CASES:
        raise ValidationFailed("cases", _("At most %(n)d questions.") % {"n": MAX_CASES})
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ValidationFailed("k", _("A whole number from 1 to %(n)d.") % {"n": MAX_K})
    named = {memory_id for case in cases for memory_id in case.expected_ids}
    for index, case in enumerate(cases):
        if not case.expected_ids or len(case.expected_ids) > MAX_EXPECTED:
            raise ValidationFailed(
                f"cases.{index}.expected_ids",
                _("Name 1 to %(n)d memory ids.") % {"n": MAX_EXPECTED},
            )
    known = set(
        Memory.objects.filter(scope=scope, public_id__in=named).values_list("public_id", flat=True)
    )
    unknown = sorted(named - known)
    if unknown:
        raise ValidationFailed(
            "cases",
            _("Not memories of this scope: %(ids)s.") % {"ids": ", ".join(unknown[:10])},
        )


def scope_benchmark(*, actor: Actor, scope: Scope, cases: Sequence[Case], k: int) -> Benchmark:
    """recall@k and MRR over `cases` in `scope` (one the actor reads)."""
    _check(scope, cases, k)
    results = []
    for index, case in enumerate(cases):
        try:
            hits = recall(actor=actor, query=case.question, scopes=[scope.public_id], k=k)
        except DomainError as exc:
            raise exc.naming(f"cases.{index}.question") from None
        found = [hit.id for hit in hits]
        expected = list(dict.fromkeys(case.expected_ids))
        ranks = [found.index(memory_id) + 1 for memory_id in expected if memory_id in found]
        results.append(
            CaseResult(
                question=case.question,
                expected_ids=expected,
                found_ids=found,
                recall=len(ranks) / len(expected),
                reciprocal_rank=1 / min(ranks) if ranks else 0.0,
                missed=[memory_id for memory_id in expected if memory_id not in found],
            )
        )
    return Benchmark(
        scope=scope,
        k=k,
        recall_at_k=sum(r.recall for r in results) / len(results),
        mrr=sum(r.reciprocal_rank for r in results) / len(results),
        cases=results,
    )
