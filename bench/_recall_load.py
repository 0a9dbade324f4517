"""Loading for bench/recall.py: embeddings cached under bench/.cache/, COPY into the tables, and
the search indexes dropped before a bulk load and built again after it."""

from __future__ import annotations

import hashlib
import io
import time
from datetime import timedelta

import numpy as np
from _django import ROOT
from _recall_data import Item

CACHE = ROOT / "bench" / ".cache"


def embed_cached(texts: list[str], label: str) -> np.ndarray:
    """Unit vectors for `texts`, cached on disk by content (chunked, so a stop loses little)."""
    from memories import embeddings

    digest = hashlib.sha256(
        ("\x1e".join([embeddings.model_name(), *texts])).encode("utf-8")
    ).hexdigest()[:16]
    folder = CACHE / f"{label}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    chunk = 4096
    parts = []
    started = time.perf_counter()
    for number, start in enumerate(range(0, len(texts), chunk)):
        path = folder / f"{number:04d}.npy"
        if not path.exists():
            vectors = np.asarray(embeddings.embed_texts(texts[start : start + chunk]), np.float32)
            np.save(path.with_suffix(".tmp.npy"), vectors)
            path.with_suffix(".tmp.npy").rename(path)
            done = min(start + chunk, len(texts))
            rate = done / (time.perf_counter() - started)
            print(f"  embedded {done}/{len(texts)} ({rate:.0f}/s)", flush=True)
        parts.append(np.load(path))
    return np.concatenate(parts) if parts else np.zeros((0, 384), np.float32)


def _vector_text(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def load(items: list[Item], vectors: np.ndarray, scopes: dict[str, object], ages: list[float]):
    """COPY memories (and windows of the long ones) straight into the tables."""
    from django.db import connection
    from django.utils import timezone

    from memories.canonical.content import content_hash
    from memories.embeddings import windows_for
    from zeromemory.core.ids import new_public_id

    now = timezone.now()
    columns = (
        "public_id, scope_id, kind_id, content, content_original, content_lang, content_hash, "
        "content_revision, translation_status, translation_attempts, translation_error, "
        "translation_claim, author_kind, agent_name, embedding, valid_from, forgotten_reason, "
        "recall_count, created_at, updated_at, validity_gaps"
    )
    public_ids = [new_public_id("mem") for _ in items]
    buffer = io.StringIO()
    for public_id, item, vector, age in zip(public_ids, items, vectors, ages, strict=True):
        created = (now - timedelta(days=age)).isoformat()
        row = [
            public_id,
            str(scopes[item.scope].id),
            item.kind,
            item.content,
            "",
            "en",
            content_hash(item.content),
            "1",
            "skipped",
            "0",
            "",
            "",
            "agent",
            "bench",
            _vector_text(vector),
            created,  # valid from its creation (`valid` is derived from it)
            "",
            "0",
            created,
            created,
            "f",  # one validity period, no gap
        ]
        buffer.write("\t".join(_copy_escape(value) for value in row) + "\n")
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY memories_memory ({columns}) FROM STDIN") as copy:
            copy.write(buffer.getvalue())
        long_ones = [(i, item) for i, item in enumerate(items) if len(item.content) > 1000]
        if long_ones:
            cursor.execute(
                "SELECT public_id, id FROM memories_memory WHERE public_id = ANY(%s)",
                [[public_ids[i] for i, _ in long_ones]],
            )
            pk_of = dict(cursor.fetchall())
            windows = [(i, w) for i, item in long_ones for w in windows_for(item.content)]
            window_vectors = embed_cached([w.text for _, w in windows], "recall-windows")
            rows = io.StringIO()
            for (i, window), vector in zip(windows, window_vectors, strict=True):
                values = [pk_of[public_ids[i]], window.position, window.start_char, window.end_char]
                rows.write("\t".join(map(str, values)) + f"\t{_vector_text(vector)}\n")
            with cursor.cursor.copy(
                "COPY memories_memorywindow (memory_id, position, start_char, end_char, embedding)"
                " FROM STDIN"
            ) as copy:
                copy.write(rows.getvalue())
    return public_ids


def _copy_escape(value: str) -> str:
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


# The search copy's (memories.models.search: a partitioned index is built on every partition)
# and the windows'.
SEARCH_INDEXES = ("memorysearch_embedding_hnsw", "window_embedding_hnsw", "memorysearch_gin")


def drop_search_indexes() -> list[str]:
    """Drop the vector and full-text indexes before a bulk load; returns their definitions."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT replace(indexdef, ' ON ONLY ', ' ON ') FROM pg_indexes"
            " WHERE indexname = ANY(%s)",
            [list(SEARCH_INDEXES)],
        )
        definitions = [row[0] for row in cursor.fetchall()]
        for name in SEARCH_INDEXES:
            cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
    return definitions


def create_search_indexes(definitions: list[str]) -> float:
    """Build them again in one pass (much faster than growing them row by row), then ANALYZE."""
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        for definition in definitions:
            cursor.execute(definition)
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("VACUUM ANALYZE memories_memory")
        cursor.execute("VACUUM ANALYZE memories_memorysearch")
        cursor.execute("VACUUM ANALYZE memories_memorywindow")
    return time.perf_counter() - started
