"""The scan: pair each memory changed since the last scan with its nearest valid neighbours in
its scope, and queue the pairs not seen before for the judge.

Subjects are valid, embedded memories whose translation is not pending (their content is
canonical English, so a fact first written in German meets its English twin), updated since the
last scan began: new ones, edited ones, translated ones, restored ones. Each subject's
neighbours come from the HNSW index, up to `HYGIENE_NEIGHBOURS` in its own scope at cosine
similarity ≥ `HYGIENE_MIN_SIMILARITY`, one statement per batch of subjects (a LATERAL index scan
each, pgvector's iterative scan keeping the scope filter from starving it). A pair is stored
once, lower id first, under a unique pair key, so pairs judged or queued before are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from memories.models import Conflict, ConflictStatus, HygieneScan, Memory, TranslationStatus

BATCH = 500
EF_SEARCH = 40

_NEIGHBOURS_SQL = """
SET LOCAL hnsw.iterative_scan = relaxed_order;
SET LOCAL hnsw.ef_search = {ef_search:d};
SET LOCAL jit = off;
SELECT s.id, s.scope_id, n.id, n.similarity
FROM memories_memory s
CROSS JOIN LATERAL (
    SELECT m.id, 1 - (m.embedding <=> s.embedding) AS similarity
    FROM memories_memory m
    WHERE m.scope_id = s.scope_id AND m.valid AND m.id <> s.id
      AND m.embedding IS NOT NULL AND m.translation_status <> 'pending'
    ORDER BY m.embedding <=> s.embedding
    LIMIT {neighbours:d}
) n
WHERE s.id = ANY(%s) AND n.similarity >= %s
"""


@dataclass(frozen=True)
class Pair:
    a: int
    b: int
    scope_id: int
    similarity: float


def subject_ids(since) -> list[int]:
    subjects = Memory.objects.filter(valid=True, embedding__isnull=False).exclude(
        translation_status=TranslationStatus.PENDING
    )
    if since is not None:
        subjects = subjects.filter(updated_at__gte=since)
    return list(subjects.order_by("id").values_list("id", flat=True))


def neighbour_pairs(ids: list[int]) -> list[Pair]:
    """The subjects' pairs with their near neighbours, each pair once (lower id first)."""
    sql = _NEIGHBOURS_SQL.format(ef_search=EF_SEARCH, neighbours=settings.HYGIENE_NEIGHBOURS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [ids, settings.HYGIENE_MIN_SIMILARITY])
        while cursor.nextset():  # the SETs answer first; the rows are in the last result
            pass
        rows = cursor.fetchall()
    pairs: dict[tuple[int, int], Pair] = {}
    for subject, scope_id, neighbour, similarity in rows:
        a, b = sorted((subject, neighbour))
        pairs[(a, b)] = Pair(a, b, scope_id, round(float(similarity), 4))
    return list(pairs.values())


def queue_pairs(pairs: list[Pair]) -> int:
    """Store the pairs not seen before (judged, queued or resolved); returns how many."""
    if not pairs:
        return 0
    known = set(
        Conflict.objects.filter(
            memory_a_id__in={pair.a for pair in pairs}, memory_b_id__in={pair.b for pair in pairs}
        ).values_list("memory_a_id", "memory_b_id")
    )
    status = (
        ConflictStatus.PENDING if settings.ANTHROPIC_API_KEY else ConflictStatus.WAITING_FOR_KEY
    )
    new = [
        Conflict(
            scope_id=pair.scope_id,
            memory_a_id=pair.a,
            memory_b_id=pair.b,
            similarity=pair.similarity,
            status=status,
        )
        for pair in pairs
        if (pair.a, pair.b) not in known
    ]
    # A concurrent scan may have stored some meanwhile: the pair key keeps one of each.
    Conflict.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
    return len(new)


def hygiene_scan(*, batch: int = BATCH) -> HygieneScan:
    """One scan over the memories changed since the last one began."""
    last = HygieneScan.objects.filter(finished_at__isnull=False).order_by("-started_at").first()
    record = HygieneScan.objects.create(started_at=timezone.now())
    ids = subject_ids(last.started_at if last is not None else None)
    seen: set[tuple[int, int]] = set()  # a pair met from both sides, in two batches, counts once
    for start in range(0, len(ids), batch):
        pairs = [p for p in neighbour_pairs(ids[start : start + batch]) if (p.a, p.b) not in seen]
        seen.update((pair.a, pair.b) for pair in pairs)
        record.pairs_found += len(pairs)
        record.pairs_new += queue_pairs(pairs)
    record.subjects = len(ids)
    record.finished_at = timezone.now()
    record.save(update_fields=["subjects", "pairs_found", "pairs_new", "finished_at"])
    return record


def scan_due(*, now=None) -> bool:
    """Whether ZM_HYGIENE_INTERVAL_MINUTES have passed since the last scan began."""
    last = HygieneScan.objects.order_by("-started_at").values_list("started_at", flat=True).first()
    if last is None:
        return True
    elapsed = (now or timezone.now()) - last
    return elapsed.total_seconds() >= settings.HYGIENE_INTERVAL_MINUTES * 60
