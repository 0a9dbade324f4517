"""LoCoMo for bench/locomo.py: reading the file, scoring ranked lists, the three SQL anchors."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ANCHOR_DEPTH = 40  # candidates per leg of the naive RRF anchor
RRF_K = 60


@dataclass(frozen=True)
class Conversation:
    id: str
    turns: list[tuple[str, str]]  # (dia_id, "<speaker>: <text>")
    session_of: dict[str, int]  # dia_id: the number of the session the turn was said in

    def conversation_id(self, dia_id: str) -> str:
        """The conversation id a watcher would send for the turn's session."""
        return f"{self.id}-session-{self.session_of[dia_id]}"


@dataclass(frozen=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Scores:
    recall5: float
    recall10: float
    mrr: float
    by_category: dict[int, float]


def load_conversations(path: Path) -> tuple[list[Conversation], list[Question]]:
    """Turns and scored questions (categories 1-4 with at least one evidence turn that exists).

    A few evidence entries hold two ids joined by ';'; they count as both.
    """
    conversations, questions = [], []
    for sample in json.loads(path.read_text()):
        talk = sample["conversation"]
        sessions = sorted(
            (int(key.split("_")[1]), value)
            for key, value in talk.items()
            if key.startswith("session_") and isinstance(value, list)
        )
        turns = [
            (turn["dia_id"], f"{turn['speaker']}: {turn['text']}")
            for _, session in sessions
            for turn in session
        ]
        session_of = {turn["dia_id"]: number for number, session in sessions for turn in session}
        known = {dia_id for dia_id, _ in turns}
        conversations.append(Conversation(sample["sample_id"], turns, session_of))
        for qa in sample["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            evidence = [
                part.strip()
                for entry in qa["evidence"]
                for part in entry.split(";")
                if part.strip() in known
            ]
            if evidence:
                questions.append(
                    Question(
                        sample["sample_id"],
                        qa["question"],
                        qa["category"],
                        tuple(dict.fromkeys(evidence)),
                    )
                )
    return conversations, questions


def score(questions: list[Question], ranked: list[list[str]], loaded: dict) -> Scores:
    """recall@5, recall@10 and MRR@10 of ranked memory ids, overall and by category."""
    recall5, recall10, reciprocal = [], [], []
    by_category: dict[int, list[float]] = {c: [] for c in CATEGORIES}
    for question, ids in zip(questions, ranked, strict=True):
        memory_of = loaded[question.conversation]["memory_of"]
        wanted = {memory_of[dia_id] for dia_id in question.evidence}
        top = ids[:10]
        recall5.append(len(wanted & set(top[:5])) / len(wanted))
        recall10.append(len(wanted & set(top)) / len(wanted))
        first = next((rank for rank, id_ in enumerate(top, 1) if id_ in wanted), None)
        reciprocal.append(1 / first if first else 0.0)
        by_category[question.category].append(recall10[-1])
    return Scores(
        statistics.fmean(recall5),
        statistics.fmean(recall10),
        statistics.fmean(reciprocal),
        {c: statistics.fmean(v) for c, v in by_category.items() if v},
    )


def evidence_share(questions: list[Question], shown: list[list[str]], loaded: dict) -> float:
    """The mean share of each question's evidence turns among the memories `shown` for it."""
    shares = []
    for question, ids in zip(questions, shown, strict=True):
        memory_of = loaded[question.conversation]["memory_of"]
        wanted = {memory_of[dia_id] for dia_id in question.evidence}
        shares.append(len(wanted & set(ids)) / len(wanted))
    return statistics.fmean(shares)


def print_table(title: str, rows: dict[str, Scores]) -> None:
    print(title)
    header = "  ".join(f"{name:>11}" for name in CATEGORIES.values())
    print(f"  {'read path':44} {'R@5':>6} {'R@10':>6} {'MRR':>6}   {header}")
    for name, s in rows.items():
        cells = "  ".join(f"{s.by_category.get(c, 0):11.3f}" for c in CATEGORIES)
        print(f"  {name:44} {s.recall5:6.3f} {s.recall10:6.3f} {s.mrr:6.3f}   {cells}")


_VECTOR = """
SELECT public_id FROM (
    SELECT public_id, id, embedding <=> %s::vector AS distance
    FROM memories_memory
    WHERE valid AND scope_id = %s AND embedding IS NOT NULL
    ORDER BY embedding <=> %s::vector
    LIMIT %s
) nearest
ORDER BY distance, id
"""

# Any term: the query's lexemes as to_tsvector('english') finds them, joined by OR.
_FULLTEXT = """
WITH q AS (
    SELECT nullif(array_to_string(ARRAY(
        SELECT quote_literal(lexeme)
        FROM unnest(tsvector_to_array(to_tsvector('english', %s::text))) AS lexeme
    ), ' | '), '')::tsquery AS tsq
)
SELECT m.public_id
FROM memories_memory m, q
WHERE m.valid AND m.scope_id = %s AND m.search_vector @@ q.tsq
ORDER BY ts_rank_cd(m.search_vector, q.tsq) DESC, m.id DESC
LIMIT %s
"""


def anchor_ranks(questions: list[Question], loaded: dict) -> dict[str, list[list[str]]]:
    """The three anchors, computed here directly in SQL on the server's database."""
    from django.db import connection, transaction

    from memories import embeddings
    from memories.recall.recall import ef_search_for
    from scopes.models import Scope
    from zeromemory.core.sql import vector_literal

    pk_of = dict(Scope.objects.values_list("public_id", "id"))
    vector, fulltext, fused = [], [], []
    for question in questions:
        scope = pk_of[loaded[question.conversation]["scope"]]
        literal = vector_literal(embeddings.embed_query(question.text))
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL hnsw.ef_search = {ef_search_for(ANCHOR_DEPTH)}")
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(_VECTOR, [literal, scope, literal, ANCHOR_DEPTH])
            by_meaning = [row[0] for row in cursor.fetchall()]
            cursor.execute(_FULLTEXT, [question.text, scope, ANCHOR_DEPTH])
            by_words = [row[0] for row in cursor.fetchall()]
        rrf: dict[str, float] = {}
        for ranking in (by_meaning, by_words):
            for rank, id_ in enumerate(ranking, 1):
                rrf[id_] = rrf.get(id_, 0.0) + 1 / (RRF_K + rank)
        vector.append(by_meaning[:10])
        fulltext.append(by_words[:10])
        fused.append(sorted(rrf, key=lambda id_: (-rrf[id_], id_))[:10])
    return {
        "anchor: pgvector cosine only (HNSW)": vector,
        "anchor: full text, any term, ts_rank_cd": fulltext,
        "anchor: naive RRF of the two (k=60, 40 per leg)": fused,
    }
