"""The scan: pair each memory changed since the last scan with its nearest valid neighbours in
its scope, and queue the pairs not seen before for the judge.

Subjects are valid, embedded memories whose translation is not pending (their content is
canonical English, so a fact first written in German meets its English twin), updated since the
last scan began: new ones, edited ones, translated ones, restored ones. Each subject's
neighbours are up to `HYGIENE_NEIGHBOURS` valid memories of its own scope at cosine similarity
≥ `HYGIENE_MIN_SIMILARITY`, found one of two ways:

- few subjects in the scope (the usual scan: what was written since the last one): the HNSW
  index, one statement per batch of subjects (a LATERAL index scan each, pgvector's iterative
  scan keeping the scope filter from starving it);
- subjects that are a sizeable share of the scope (the first scan, a bulk import): every
  subject against every memory of the scope at once, as matrix products over the scope's
  embeddings, exact, and far cheaper than one index walk per subject when most rows are
  subjects anyway (bench/hygiene.py measures both).

A pair is stored once, lower id first, under a unique pair key, so pairs judged or queued
before are skipped.

A scan works in slices of SLICE subjects (in id order) and gives the CPU back between them; past
ZM_HYGIENE_SCAN_SECONDS it stops after its slice, and the next run (the schedule's, a minute
later) goes on from the last subject done, so a large import's first scan spreads over several
runs instead of one that must fit in ZM_Q_TIMEOUT. A scan's subjects are those changed before it
began, so the scan after it starts where it ended.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from memories.background import breathe
from memories.models import Conflict, ConflictStatus, HygieneScan, Memory, TranslationStatus
from zeromemory.core.sql import statistics_kept

BATCH = 500
EF_SEARCH = 40
# A scope whose subjects are at least 1/EXACT_SHARE of its memories is compared exactly.
EXACT_SHARE = 50
EXACT_BLOCK = 512
SLICE = 2000  # subjects per slice of a scan
CACHED_ROWS = 200_000  # scopes' embeddings a run keeps for its next slices (about 300 MB)

_NEIGHBOURS_SQL = """
SET LOCAL hnsw.iterative_scan = relaxed_order;
SET LOCAL hnsw.ef_search = {ef_search:d};
SET LOCAL jit = off;
SELECT s.id, s.scope_id, n.id, n.similarity
FROM memories_memory s
CROSS JOIN LATERAL (
    SELECT m.memory_id AS id, 1 - (m.embedding <=> s.embedding) AS similarity
    FROM memories_memorysearch m
    WHERE m.scope_id = s.scope_id AND m.valid AND m.memory_id <> s.id
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


def _comparable():
    """The memories a pair may hold: valid, embedded, their content canonical."""
    return Memory.objects.filter(valid=True, embedding__isnull=False).exclude(
        translation_status=TranslationStatus.PENDING
    )


def subjects_by_scope(since, *, before=None, after_id: int = 0, limit: int | None = None):
    """The subjects changed since `since` (and before `before`) with an id above `after_id`, the
    first `limit` of them in id order, by scope."""
    subjects = _comparable().filter(id__gt=after_id)
    if since is not None:
        subjects = subjects.filter(updated_at__gte=since)
    if before is not None:
        subjects = subjects.filter(updated_at__lt=before)
    by_scope: dict[int, list[int]] = defaultdict(list)
    for pk, scope_id in subjects.order_by("id").values_list("id", "scope_id")[:limit]:
        by_scope[scope_id].append(pk)
    return by_scope


class Matrix:
    """A scope's comparable memories as unit rows, kept for the slices of one run that need it."""

    def __init__(self, scope_id: int) -> None:
        found = list(_comparable().filter(scope_id=scope_id).values_list("id", "embedding"))
        self.ids = np.array([pk for pk, _ in found], dtype=np.int64)
        self.rows = np.vstack([v for _, v in found]).astype(np.float32) if found else None
        if self.rows is not None:
            self.rows /= np.linalg.norm(self.rows, axis=1, keepdims=True)
        self.position = {pk: index for index, pk in enumerate(self.ids.tolist())}


def exact_pairs(scope_id: int, subjects: list[int], matrix: Matrix | None = None) -> list[Pair]:
    """The subjects' nearest neighbours among all the scope's memories, computed exactly, a
    block of subjects at a time with the CPU given back between blocks."""
    matrix = matrix or Matrix(scope_id)
    if len(matrix.ids) < 2:
        return []
    ids, rows = matrix.ids, matrix.rows
    wanted = np.array([matrix.position[pk] for pk in subjects if pk in matrix.position])
    k = min(settings.HYGIENE_NEIGHBOURS, len(ids) - 1)
    pairs: dict[tuple[int, int], Pair] = {}
    for start in range(0, len(wanted), EXACT_BLOCK):
        block = wanted[start : start + EXACT_BLOCK]
        similarity = rows[block] @ rows.T
        similarity[np.arange(len(block)), block] = -1.0  # not its own neighbour
        nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        nearest_values = np.take_along_axis(similarity, nearest, axis=1)
        for row, columns, values in zip(block, nearest, nearest_values, strict=True):
            for column, value in zip(columns, values, strict=True):
                if value >= settings.HYGIENE_MIN_SIMILARITY:
                    a, b = sorted((int(ids[row]), int(ids[column])))
                    pairs[(a, b)] = Pair(a, b, scope_id, round(float(value), 4))
        breathe()
    return list(pairs.values())


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
    # Recall asks of every hit whether a pair names it: a first scan's thousands of pairs must
    # not be read by the plans made while the table was empty.
    statistics_kept(model=Conflict, added=len(new))
    return len(new)


def _current() -> HygieneScan:
    """The scan an earlier run left unfinished, else a new one over what changed since the last
    one began."""
    unfinished = HygieneScan.objects.filter(finished_at__isnull=True).order_by("started_at")
    if (record := unfinished.first()) is not None:
        return record
    last = HygieneScan.objects.filter(finished_at__isnull=False).order_by("-started_at").first()
    return HygieneScan.objects.create(
        started_at=timezone.now(), since=last.started_at if last is not None else None
    )


def hygiene_scan(
    *, batch: int = BATCH, slice_size: int = SLICE, seconds: float | None = None
) -> HygieneScan:
    """One run of a scan over the memories changed since the last one began: slices until
    they are done (the scan finishes) or `seconds` (ZM_HYGIENE_SCAN_SECONDS) have passed (the
    next run goes on)."""
    budget = settings.HYGIENE_SCAN_SECONDS if seconds is None else seconds
    started = time.monotonic()
    record = _current()
    matrices: dict[int, Matrix] = {}
    seen: set[tuple[int, int]] = set()  # a pair met from both sides, in two batches, counts once
    while True:
        by_scope = subjects_by_scope(
            record.since, before=record.started_at, after_id=record.after_id, limit=slice_size
        )
        if not by_scope:
            record.finished_at = timezone.now()
            break
        sizes = dict(
            _comparable()
            .filter(scope_id__in=list(by_scope))
            .values_list("scope_id")
            .annotate(n=Count("id"))
            .values_list("scope_id", "n")
        )
        for scope_id, ids in by_scope.items():
            if len(ids) * EXACT_SHARE >= sizes.get(scope_id, 0):
                if scope_id not in matrices:
                    if sum(len(m.ids) for m in matrices.values()) > CACHED_ROWS:
                        matrices.clear()
                    matrices[scope_id] = Matrix(scope_id)
                found = [exact_pairs(scope_id, ids, matrices[scope_id])]
            else:
                found = (
                    neighbour_pairs(ids[start : start + batch])
                    for start in range(0, len(ids), batch)
                )
            for pairs in found:
                pairs = [pair for pair in pairs if (pair.a, pair.b) not in seen]
                seen.update((pair.a, pair.b) for pair in pairs)
                record.pairs_found += len(pairs)
                record.pairs_new += queue_pairs(pairs)
        record.subjects += sum(len(ids) for ids in by_scope.values())
        record.after_id = max(max(ids) for ids in by_scope.values())
        record.save(update_fields=["subjects", "pairs_found", "pairs_new", "after_id"])
        breathe()
        if time.monotonic() - started >= budget:
            break
    record.save(update_fields=["subjects", "pairs_found", "pairs_new", "after_id", "finished_at"])
    return record


def scan_due(*, now=None) -> bool:
    """Whether a scan is unfinished (it goes on) or ZM_HYGIENE_INTERVAL_MINUTES have passed
    since the last one began."""
    if HygieneScan.objects.filter(finished_at__isnull=True).exists():
        return True
    last = HygieneScan.objects.order_by("-started_at").values_list("started_at", flat=True).first()
    if last is None:
        return True
    elapsed = (now or timezone.now()) - last
    return elapsed.total_seconds() >= settings.HYGIENE_INTERVAL_MINUTES * 60


@dataclass(frozen=True)
class ScopeScan:
    subjects: int
    more: bool  # subjects past this share, for the next request (or the schedule's scans)
    pairs_found: int
    pairs_new: int
    last_subject: str | None = None  # the public id of the share's last subject, when `more`


def scope_scan(
    *, scope_id: int, slice_size: int, after_id: int = 0, batch: int = BATCH
) -> ScopeScan:
    """One scope's scan now (an admin's request): its memories changed since the last finished
    scan began (every one, before any scan), the first `slice_size` of them in id order past
    `after_id` (where the previous request's share ended), against their neighbours in the
    scope; the pairs not seen before are queued for the judge. The schedule's scan records are
    left as they are: it meets the same subjects again and skips their pairs."""
    last = HygieneScan.objects.filter(finished_at__isnull=False).order_by("-started_at").first()
    subjects = _comparable().filter(scope_id=scope_id, id__gt=after_id)
    if last is not None:
        subjects = subjects.filter(updated_at__gte=last.started_at)
    found_rows = list(subjects.order_by("id").values_list("id", "public_id")[: slice_size + 1])
    more, found_rows = len(found_rows) > slice_size, found_rows[:slice_size]
    if not found_rows:
        return ScopeScan(subjects=0, more=False, pairs_found=0, pairs_new=0)
    ids = [pk for pk, _ in found_rows]
    if len(ids) * EXACT_SHARE >= _comparable().filter(scope_id=scope_id).count():
        found = [exact_pairs(scope_id, ids)]
    else:
        found = (neighbour_pairs(ids[start : start + batch]) for start in range(0, len(ids), batch))
    pairs = {(pair.a, pair.b): pair for group in found for pair in group}
    new = queue_pairs(list(pairs.values()))
    return ScopeScan(
        subjects=len(ids),
        more=more,
        pairs_found=len(pairs),
        pairs_new=new,
        last_subject=found_rows[-1][1] if more else None,
    )
