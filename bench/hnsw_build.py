"""The HNSW graph's build depth (`ef_construction`) against what a new memory's insert costs and
what the graph finds: vectors of real text nobody here wrote (the paragraphs of the standard
library's docstrings and the comment blocks of the packages installed in this venv), inserted
one at a time, as memories arrive, into one scratch table per depth (m 16, as the product's
graphs); then held-out texts' top 10 through each graph against their exact top 10, at three
search depths (`hnsw.ef_search`, with the iterative scan recall uses).

    .venv/bin/python bench/hnsw_build.py [--vectors 40000] [--queries 300] [--depths 64,40,32]

Runs in a throwaway database (`bench_hnsw_build`) of the embedded server. The texts' vectors are
kept in bench/.cache/ (embedding 40,000 texts takes minutes). Prints, per depth, the insert's
p50 and mean over the last 2,000 inserts (one statement each through Django's cursor, with its round
trip), and recall@10 at each search depth with the query's p50.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import random
import re
import statistics
import sys
import time
import warnings
from pathlib import Path

from _django import ROOT, setup, throwaway_database

CACHE = ROOT / "bench" / ".cache"
SEARCH_DEPTHS = (10, 40, 200)  # hygiene's scan uses 40; recall at least 200
SKIPPED_MODULES = {"antigravity", "this", "idlelib", "turtledemo", "tkinter"}
TOP_10 = "SELECT id FROM {} ORDER BY embedding <=> %s::vector LIMIT 10"


def docstring_paragraphs() -> list[str]:
    """Paragraphs of 40 to 400 characters of the standard library's docstrings."""
    found = []
    for name in sorted(sys.stdlib_module_names):
        if name.startswith("_") or name in SKIPPED_MODULES:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
        except Exception:  # noqa: S112 - a module this platform lacks is skipped
            continue
        for item in [module, *(getattr(module, attribute, None) for attribute in dir(module))]:
            doc = getattr(item, "__doc__", None)
            if isinstance(doc, str):
                found += [" ".join(part.split()) for part in re.split(r"\n\s*\n", doc)]
    return [text for text in found if 40 <= len(text) <= 400]


def comment_blocks() -> list[str]:
    """Runs of `# ` comment lines, 40 to 300 characters joined, in the installed packages."""
    found = []
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for path in sorted((site / "site-packages").rglob("*.py")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        block: list[str] = []
        for line in [*lines, ""]:
            stripped = line.strip()
            if stripped.startswith("# "):
                block.append(stripped[2:])
                continue
            if block:
                text, block = " ".join(block), []
                if 40 <= len(text) <= 300 and not text.startswith(("type:", "noqa", "pragma")):
                    found.append(text)
    return found


def texts(count: int) -> list[str]:
    unique = list(dict.fromkeys(docstring_paragraphs() + comment_blocks()))
    random.Random(7).shuffle(unique)
    if len(unique) < count:
        raise SystemExit(f"only {len(unique)} texts found, {count} asked for")
    return unique[:count]


def vectors(chosen: list[str]):
    """The texts' embeddings (float32, one row each), from the cache when it holds them."""
    import numpy

    from memories.embeddings import embed_texts

    digest = hashlib.sha256("\n".join(chosen).encode()).hexdigest()[:12]
    path = CACHE / f"hnsw-build-{len(chosen)}-{digest}.npy"
    if path.exists():
        return numpy.load(path)
    started = time.perf_counter()
    embedded = numpy.asarray(embed_texts(chosen), dtype=numpy.float32)
    print(f"embedded {len(chosen)} texts in {time.perf_counter() - started:.0f} s")
    CACHE.mkdir(parents=True, exist_ok=True)
    numpy.save(path, embedded)
    return embedded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=40_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--depths", default="64,40,32", help="ef_construction values")
    args = parser.parse_args()
    depths = [int(value) for value in args.depths.split(",")]
    setup()

    from django.db import connection

    from zeromemory.core.sql import exact_vector_literal, vector_literal

    embedded = vectors(texts(args.vectors + args.queries))
    stored = [exact_vector_literal(row.tolist()) for row in embedded[: args.vectors]]
    queries = [vector_literal(row.tolist()) for row in embedded[args.vectors :]]
    print(f"{len(stored)} vectors stored one at a time, {len(queries)} held-out queries")
    with throwaway_database("bench_hnsw_build"), connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")  # the inserts' own work, not the disk's
        for depth in depths:
            table = f"scratch_{depth}"
            cursor.execute(
                f"CREATE TABLE {table} (id bigserial PRIMARY KEY, embedding vector(384))"
                " WITH (toast_tuple_target = 8160)"
            )
            cursor.execute(
                f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops)"
                f" WITH (m = 16, ef_construction = {depth})"
            )
            took = []
            for literal in stored:
                started = time.perf_counter()
                cursor.execute(f"INSERT INTO {table} (embedding) VALUES (%s::vector)", [literal])  # noqa: S608
                took.append((time.perf_counter() - started) * 1000)
            last = took[-2000:]
            print(
                f"ef_construction {depth}: an insert at {len(stored)} vectors"
                f" p50 {statistics.median(last):.2f} ms, mean {statistics.mean(last):.2f}"
            )
        exact = []
        cursor.execute("SET enable_indexscan = off")
        for query in queries:
            cursor.execute(TOP_10.format(f"scratch_{depths[0]}"), [query])
            exact.append({row[0] for row in cursor.fetchall()})
        cursor.execute("RESET enable_indexscan")
        cursor.execute("SET hnsw.iterative_scan = relaxed_order")
        for search in SEARCH_DEPTHS:
            cursor.execute(f"SET hnsw.ef_search = {search}")
            for depth in depths:
                found, took = 0, []
                for query, best in zip(queries, exact, strict=True):
                    started = time.perf_counter()
                    cursor.execute(TOP_10.format(f"scratch_{depth}"), [query])
                    took.append((time.perf_counter() - started) * 1000)
                    found += len(best & {row[0] for row in cursor.fetchall()})
                print(
                    f"ef_search {search}, ef_construction {depth}:"
                    f" recall@10 {found / (10 * len(queries)):.4f},"
                    f" a query p50 {statistics.median(took):.2f} ms"
                )


if __name__ == "__main__":
    main()
