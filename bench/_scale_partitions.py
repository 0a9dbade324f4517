"""bench/scale.py's partitioning prototype: a copy of memories_memory hash-partitioned by
scope_id, each partition with its own HNSW and GIN index, and recall's statement
(memories/recall/statement.py, the product's tuning) run bare from psycopg against it and against
the one table, with the scope ids the access module gives. Nothing here touches the product's
schema; the copy is dropped afterwards."""

from __future__ import annotations

import re
import statistics
import time

from _django import percentile

PARTITIONED = "bench_memory_part"


def connect():
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    # Client-side binding, as Django's cursors bind: the statement is a multi-statement message
    # (the SETs, then the query) with parameters.
    return psycopg.connect(**params, autocommit=True, cursor_factory=psycopg.ClientCursor)


def build(cursor, partitions: int) -> dict[str, float]:
    """The partitioned copy, with the one table's indexes per partition (its unique ones
    become plain: a unique index there must hold the partition key)."""
    timings = {}
    cursor.execute(f"DROP TABLE IF EXISTS {PARTITIONED}")
    cursor.execute(
        f"CREATE TABLE {PARTITIONED} (LIKE memories_memory INCLUDING DEFAULTS INCLUDING GENERATED)"
        " PARTITION BY HASH (scope_id)"
    )
    for remainder in range(partitions):
        cursor.execute(
            f"CREATE TABLE {PARTITIONED}_{remainder} PARTITION OF {PARTITIONED}"
            f" FOR VALUES WITH (MODULUS {partitions}, REMAINDER {remainder})"
        )
    cursor.execute(
        "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position)"
        " FROM information_schema.columns WHERE table_name = 'memories_memory'"
        " AND is_generated = 'NEVER'"
    )
    (columns,) = cursor.fetchone()
    started = time.perf_counter()
    # The column names come from the catalogue, never from input.
    copy = f"INSERT INTO {PARTITIONED} ({columns}) SELECT {columns} FROM memories_memory"  # noqa: S608
    cursor.execute(copy)
    timings["copy"] = time.perf_counter() - started
    cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories_memory'")
    definitions = cursor.fetchall()
    cursor.execute("SELECT count(*) FROM memories_memory")
    (memories,) = cursor.fetchone()
    cursor.execute(f"SET maintenance_work_mem = '{max(256, min(4096, memories * 3 // 1000))}MB'")
    timings["index"] = 0.0
    for name, definition in definitions:
        made = re.sub(r"\bON (public\.)?memories_memory\b", f"ON {PARTITIONED}", definition)
        made = made.replace("CREATE UNIQUE INDEX", "CREATE INDEX")
        made = made.replace(f"INDEX {name} ", f"INDEX bench_part_{name[:40]} ", 1)
        started = time.perf_counter()
        cursor.execute(made)
        if "hnsw" in made:
            timings["index"] += time.perf_counter() - started
    cursor.execute(f"ANALYZE {PARTITIONED}")
    return timings


def drop(cursor) -> None:
    cursor.execute(f"DROP TABLE IF EXISTS {PARTITIONED}")


def on_table(statement: str, table: str) -> str:
    return re.sub(r"\bmemories_memory\b", table, statement)


def pruned_joins(statement: str, array: str) -> str:
    """The statement with the scopes named on every join of a memory by id too, so that those
    lookups read only the partitions of the scopes (by id alone they probe every partition)."""
    return re.sub(
        rf"JOIN {PARTITIONED} m ON m\.id = ([a-z_]+\.[a-z_]+|coalesce\(v\.id, f\.id\))",
        lambda found: f"{found.group(0)} AND m.scope_id = ANY({array})",
        statement,
    )


def measure(cursor, *, cases: dict[str, tuple[int, ...]], queries: list[str], requests: int):
    """For each case (a list of scope ids), recall's statement on the one table and on the
    partitioned copy: milliseconds per run, and the partitions EXPLAIN shows it reading."""
    from memories import embeddings
    from memories.entities.dictionary import query_keys
    from memories.recall import relevance, sessions
    from memories.recall.recall import DEFAULT_K, ef_search_for
    from memories.recall.statement import IDF_ROW_LIMIT, PRODUCT, rows_statement
    from zeromemory.core.sql import vector_literal

    vectors = {query: vector_literal(embeddings.embed_query(query)) for query in queries}
    pool = DEFAULT_K + sessions.EXTRA_CANDIDATES

    def parameters(query: str) -> list:
        """The statement's parameters, in recall's order (`search_found`)."""
        keys, plain = query_keys(query)
        return [
            ef_search_for(PRODUCT.vector_depth * DEFAULT_K),
            vectors[query],
            query,
            None,
            None,
            relevance.query_names(query),
            keys,
            plain,
            pool,
        ]

    results = {}
    for case, ids in cases.items():
        array = "'{" + ",".join(str(int(pk)) for pk in ids) + "}'::bigint[]"
        cursor.execute(rows_statement(scopes=array, kinds=False), [IDF_ROW_LIMIT])
        (rows,) = cursor.fetchone()
        sql = PRODUCT.statement(scopes=array, kinds=False, mode="hybrid", k=DEFAULT_K, rows=rows)
        variants = (
            ("one table", sql),
            ("partitioned", on_table(sql, PARTITIONED)),
            ("partitioned, joins pruned", pruned_joins(on_table(sql, PARTITIONED), array)),
        )
        for label, text in variants:
            latencies = []
            for n in range(requests + 5):
                query = queries[n % len(queries)]
                params = parameters(query)
                started = time.perf_counter()
                cursor.execute(text, params)
                while cursor.nextset():
                    pass
                cursor.fetchall()
                if n >= 5:  # the first few warm the caches
                    latencies.append((time.perf_counter() - started) * 1000)
            query = queries[0]
            explained = text.replace("\nWITH input", "\nEXPLAIN (COSTS OFF) WITH input", 1)
            cursor.execute(
                explained,
                parameters(query),
            )
            while cursor.nextset():
                pass
            plan = "\n".join(line for (line,) in cursor.fetchall())
            read = set(re.findall(rf"\b{PARTITIONED}_(\d+)\b", plan))
            results[(case, label)] = {
                "p50": statistics.median(latencies),
                "p95": percentile(latencies, 95),
                "partitions": len(read),
                "scopes": len(ids),
            }
    return results
