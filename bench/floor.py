"""Each request beside its floor: what the model, PostgreSQL and HTTP alone cost on this machine.

    .venv/bin/python bench/floor.py [--memories 2000] [--requests 40] [--batches 4] [--rounds 4]
                                    [--fresh] [--busy] [--busy-seconds 60]

Starts `manage.py serve` as `make run` does (bench/serving.py's server, data directory and
requests), stops its worker (SIGSTOP) and, in `--rounds` alternating rounds so that requests and
floors meet the same load on a shared machine:

1. times each request over one keep-alive connection, one at a time (p50 / p95): recall in one
   scope, build_context, briefing, remember one memory, batches of 100 short memories and of
   100 chat turns;
2. measures the floors:
   - model: the embedding model alone in this process with the threads a web process gives the
     same texts (memories.embeddings picks them per pass): one query, one short memory, a batch
     of 100 short memories, a batch of 100 chat turns;
   - SQL: the statements one request runs, captured once by running it in this process
     (Django's test client, inside a transaction rolled back afterwards), then each run bare
     from psycopg against the server's database (`--replays` times a round, each time in one
     transaction rolled back, the sequences set back so the ids repeat; the median counts),
     and once under `EXPLAIN (ANALYZE, TIMING)` (planning + execution inside PostgreSQL); each
     transaction that writes memories adds one bare commit that flushes the WAL;
   - loopback: the same request body posted to an empty HTTP server of the standard library;
3. prints each request's p50 / p95, its floor (model + bare statements + loopback) and both
   over the floor, the statements of each request, and the issue's ratios; with `--busy`, the
   same requests again while another user posts batches of 100 chat turns as fast as the server
   takes them (bench/busy.py's writer, one in twenty German) and the worker translates them
   (the suite's fake LLM), beside the same idle floors (and busy recall's p50 by its place in
   the round, the first right after the client's own batches), and in how many busy rounds the
   writer's connection sat in the timed client's web process (the kernel places each
   connection; the batches go on to the bulk process, zeromemory.core.bulk, so only the event
   loop that hands them over is shared).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from _busy import fake_llm, load_average, server_pids, shares_a_web_process, worker_paused
from _chat import conversations, short_memory
from _django import ROOT, percentile, setup_for
from _server import Api, free_port, served, start_baseline
from _serving_data import create_scope, data_dir_for, prepared, user_with_token
from serving import Requests

BATCH = 100
KINDS = (
    "recall, one scope",
    "build_context",
    "briefing",
    "remember (one memory)",
    "batch of 100 short",
    "batch of 100 chat turns",
)
EXPLAINABLE = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "(")


def request_calls(requests: Requests) -> dict[str, Callable]:
    """Each kind of request as a function of a client's `call`."""
    return {
        "recall, one scope": lambda call: requests.recall_one(call, 0),
        "build_context": lambda call: requests.context(call, 0),
        "briefing": lambda call: requests.briefing(call, 0),
        "remember (one memory)": lambda call: requests.remember(call, 0),
        "batch of 100 short": lambda call: requests.batch(call, 0, chat=False),
        "batch of 100 chat turns": lambda call: requests.batch(call, 0, chat=True),
    }


def timed(call: Callable[[], tuple[int, dict]], count: int, warmup: int) -> list[float]:
    """Milliseconds of `count` calls after `warmup` ones, each checked for its status."""
    latencies = []
    for n in range(warmup + count):
        started = time.perf_counter()
        status, body = call()
        if n >= warmup:
            latencies.append((time.perf_counter() - started) * 1000)
        assert status in (200, 201), (status, body)
    return latencies


def sample(
    api: Api, calls: dict[str, Callable], times: dict, requests: int, batches: int, warm: bool
) -> None:
    """One round of every kind of request over `api`, appended to `times`."""
    for name, request in calls.items():
        count = batches if name.startswith("batch") else requests
        warmup = 0 if not warm else 1 if name.startswith("batch") else 3
        latencies = timed(lambda request=request: request(api.call), count, warmup)
        times.setdefault(name, []).extend(latencies)


# The model alone.


def model_round(questions: list[str], chats: list[str], samples: dict, *, first: bool) -> None:
    """Milliseconds the model takes for each request's texts, in this process (idle server),
    appended to `samples`: eight single texts and one batch of each kind."""
    import torch

    from memories.embeddings import embed_texts

    def ms(name: str, texts_for: Callable[[int], list[str]], times: int) -> None:
        if first:
            embed_texts(texts_for(-1))  # warm
        for n in range(times):
            texts = texts_for(n + len(samples.get(name, [])))
            started = time.perf_counter()
            embed_texts(texts)
            samples.setdefault(name, []).append((time.perf_counter() - started) * 1000)

    ms("recall, one scope", lambda n: [questions[n % len(questions)]], 8)
    ms("remember (one memory)", lambda n: [short_memory(10_000 + n)], 8)
    one_thread = torch.get_num_threads()  # what memories.embeddings chose, as in a web process
    ms("batch of 100 short", lambda n: [short_memory(n * BATCH + i) for i in range(BATCH)], 1)
    ms("batch of 100 chat turns", lambda n: [f"{t} ({n}.{i})" for i, t in enumerate(chats)], 1)
    if first:
        batch_threads = torch.get_num_threads()
        from memories.embeddings import runs_traced

        how = "its encoder traced" if runs_traced() else "the module"
        print(
            f"model: {one_thread} torch thread(s) for one text ({how}), "
            f"{batch_threads} for a batch (the module)"
        )


def model_floor(samples: dict) -> dict[str, float]:
    model = {name: statistics.median(values) for name, values in samples.items()}
    return dict(model, build_context=model["recall, one scope"], briefing=0.0)


# The statements alone.


# A statement the server runs as EXECUTE of one its connection prepared (zeromemory.core.prepared)
# is replayed twice: whole, as the statement alone was sent before (parsed and planned on every
# run: the floor), and as the server sends it, with the plan its connection keeps.


def literals(arguments: str) -> list[str]:
    """The SQL literals of an EXECUTE's argument list as psycopg writes them (numbers, NULL,
    'quoted' with '' inside, '{...}'::type[]), split at the commas between them."""
    found, current, quoted = [], [], False
    for char in arguments:
        if char == "'":
            quoted = not quoted  # a doubled '' turns it off and on again
        if char == "," and not quoted:
            found.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if current:
        found.append("".join(current).strip())
    return found


# zeromemory.core.prepared's settings of the plan, one of them in each EXECUTE's message
GENERIC_PLAN = "SET LOCAL plan_cache_mode = force_generic_plan;"
CHOSEN_PLAN = "SET LOCAL plan_cache_mode = auto;"


def _execute_split(sql: str) -> tuple[str, str, str]:
    """A captured EXECUTE's message as what precedes its EXECUTE (PREPARE, DEALLOCATE,
    settings), the EXECUTE itself, and the statements sent after it in the same message
    (`zeromemory.core.prepared.execute_then`: a write's inserts after its near lookup)."""
    start = sql.index("EXECUTE zm")
    depth, quoted, end = 0, False, len(sql)
    for position in range(start, len(sql)):
        char = sql[position]
        if char == "'":
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
            if depth == 0:
                end = position + 1
                break
        elif not quoted and char == ";" and depth == 0:
            end = position
            break
    return sql[:start], sql[start:end], sql[end:]


def as_sent_again(sql: str) -> str:
    """A captured EXECUTE's message without the PREPARE (or DEALLOCATE) that the first run of
    a statement on a connection carries: its settings, the EXECUTE and what follows it."""
    head, run, tail = _execute_split(sql)
    settings = [piece.strip() for piece in head.split(";") if piece.strip().upper()[:4] == "SET "]
    return " ".join(f"{setting};" for setting in settings) + " " + run + tail


def sent_whole(sql: str, prepared: dict[str, str]) -> str:
    """The message with each EXECUTE replaced by the statement it runs, the values written in
    where the statement had its placeholders: the text the server sent before preparing (a
    write's inserts after its near lookup are EXECUTEs too)."""
    head, run, tail = _execute_split(as_sent_again(sql))
    settings = head.replace(GENERIC_PLAN, "").replace(CHOSEN_PLAN, "").strip()
    whole = (settings + " " + _statement_of(run, prepared)).strip()
    while "EXECUTE zm" in tail:
        between, run, tail = _execute_split(tail)
        whole += between + _statement_of(run, prepared)
    return whole + tail


def _statement_of(run: str, prepared: dict[str, str]) -> str:
    """An `EXECUTE zm_…(values)` as the statement it runs, its values written in."""
    name, _, arguments = run.removeprefix("EXECUTE ").partition("(")
    body = prepared[name.strip()]
    values = literals(arguments.rstrip().removesuffix(")")) if arguments else []
    for number in range(len(values), 0, -1):  # $12 before $1
        body = body.replace(f"${number}", values[number - 1])
    return body


@dataclass
class Statement:
    sql: str
    bare: list[float] = field(default_factory=list)  # ms from psycopg, round trip included
    planning: float | None = None  # ms, EXPLAIN (ANALYZE, TIMING)
    execution: float | None = None
    kept: list[float] = field(default_factory=list)  # ms, EXECUTE with the kept plan
    whole: str = ""  # an EXECUTE's statement with its values, as sent before preparing

    @property
    def prepared(self) -> bool:
        return bool(self.whole)

    @property
    def floor_sql(self) -> str:
        return self.whole or self.sql

    @property
    def floor(self) -> float:
        """Its floor: the median of the cheaper way to send it (a prepared one with its kept
        plan, when that is quicker than the whole statement planned afresh)."""
        whole = statistics.median(self.bare)
        return min(whole, statistics.median(self.kept)) if self.kept else whole

    @property
    def short(self) -> str:
        text = " ".join(self.floor_sql.split())
        if text.upper().startswith("SET LOCAL HNSW"):  # the search: its statement after the SETs
            text = text[text.upper().index("WITH ") :]
        return ("(prepared) " if self.prepared else "") + text[:90]


@dataclass
class Captured:
    statements: list[Statement]
    commits: int  # transactions that write: each ends in a commit that flushes the WAL

    @property
    def bare_ms(self) -> float:
        return sum(s.floor for s in self.statements)

    @property
    def server_ms(self) -> float:
        return sum((s.planning or 0) + (s.execution or 0) for s in self.statements)


def sequences(cursor) -> dict[str, tuple[int | None, int]]:
    cursor.execute(
        "SELECT format('%I.%I', schemaname, sequencename), last_value, start_value "
        "FROM pg_sequences"
    )
    return {name: (last, start) for name, last, start in cursor.fetchall()}


def capture(request: Callable, token: str) -> tuple[list[str], dict[str, tuple[int | None, int]]]:
    """The statements a request runs, through Django's test client in this process, inside a
    transaction rolled back afterwards; and the sequences as they were before it."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    client = APIClient(HTTP_HOST="127.0.0.1")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def call(method: str, path: str, body):
        response = (
            client.get(path, body) if method == "GET" else client.post(path, body, format="json")
        )
        return response.status_code, response.json() if response.content else {}

    status, body = request(call)  # warm: caches of the process, the model
    assert status in (200, 201), (status, body)
    with connection.cursor() as cursor:
        before = sequences(cursor)
    with transaction.atomic():
        with CaptureQueriesContext(connection) as queries:
            status, body = request(call)
        transaction.set_rollback(True)
    assert status in (200, 201), (status, body)
    with connection.cursor() as cursor:
        after = sequences(cursor)
    moved = {name: value for name, value in before.items() if after.get(name) != value}
    return [query["sql"] for query in queries.captured_queries], moved


def commit_times(conn, times: int) -> list[float]:
    """One bare commit of a transaction that wrote a row: what flushing the WAL costs here (a
    table of the bench's own, dropped afterwards)."""
    conn.execute("CREATE TABLE IF NOT EXISTS bench_floor_commit (n int)")
    spent = []
    for n in range(times):
        conn.execute("BEGIN")
        conn.execute("INSERT INTO bench_floor_commit VALUES (%s)", [n])
        started = time.perf_counter()
        conn.execute("COMMIT")
        spent.append((time.perf_counter() - started) * 1000)
    return spent


@contextmanager
def sequences_set_back(conn, moved: dict) -> Iterator[None]:
    """The sequences as they were before the captured request, so the ids repeat; afterwards
    as they were before the replay (the server's own requests went on meanwhile)."""
    now = sequences(conn.cursor())
    for name, (last, start) in moved.items():
        conn.execute("SELECT setval(%s, %s, %s)", [name, last or start, last is not None])
    try:
        yield
    finally:
        for name in moved:
            last, start = now[name]
            conn.execute("SELECT setval(%s, %s, %s)", [name, last or start, last is not None])


def replay(conn, statements: list[Statement], moved: dict, replays: int) -> None:
    """Each statement bare, `replays` times, each run in one transaction rolled back; those
    the server prepares once more as it sends them, with the plan kept."""
    for _ in range(replays):
        for kept in (False, True):
            with sequences_set_back(conn, moved):
                conn.execute("BEGIN")
                for statement in statements:
                    if kept and not statement.prepared:
                        continue
                    sql = statement.sql if kept else statement.floor_sql
                    started = time.perf_counter()
                    cursor = conn.execute(sql)
                    if cursor.description:
                        cursor.fetchall()
                    spent = (time.perf_counter() - started) * 1000
                    (statement.kept if kept else statement.bare).append(spent)
                conn.execute("ROLLBACK")


def prepare_as_the_server(conn, statements: list[Statement]) -> None:
    """The statements the server's connections prepared (zeromemory.core.prepared), prepared
    on ours too, as this process's connection prepared them while capturing."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'zm%%'")
        # `statement` is the whole message that held the PREPARE: its body ends at the first
        # semicolon (the prepared statements have none of their own).
        found = {
            name: text.split(f"PREPARE {name} AS ", 1)[1].split(";", 1)[0]
            for name, text in cursor.fetchall()
        }
    ours = {name for (name,) in conn.execute("SELECT name FROM pg_prepared_statements")}
    for name, body in found.items():
        if name not in ours:
            conn.execute(f"PREPARE {name} AS {body}")
    for statement in statements:
        if "EXECUTE zm" in statement.sql:
            statement.whole = sent_whole(statement.sql, found)
            statement.sql = as_sent_again(statement.sql)


def explain(conn, statements: list[Statement], moved: dict) -> None:
    """Each statement once under EXPLAIN (ANALYZE, TIMING), in one transaction rolled back."""
    with sequences_set_back(conn, moved):
        conn.execute("BEGIN")
        explain_each(conn, statements)
        conn.execute("ROLLBACK")


def explain_each(conn, statements: list[Statement]) -> None:
    for statement in statements:
        sql = statement.floor_sql.lstrip()
        while sql.upper().startswith("SET "):  # settings sent with a query, in one string
            setting, _, sql = sql.partition(";")
            conn.execute(setting)
            sql = sql.lstrip()
        if sql.upper().startswith(EXPLAINABLE):
            [[plan]] = conn.execute("EXPLAIN (ANALYZE, TIMING, FORMAT JSON) " + sql).fetchone()
            statement.planning, statement.execution = plan["Planning Time"], plan["Execution Time"]
        elif sql:
            conn.execute(sql)


def write_transactions(sqls: list[str]) -> int:
    """Transactions of the request (outermost savepoints here, the test's transaction around
    them) that insert, update or delete: each is a commit with a WAL flush on the server. An
    activity row's commit does not wait for the flush (synchronous_commit off), so a transaction
    that writes only the activity log is not counted."""
    count, depth, writes = 0, 0, set()
    for sql in sqls:
        head = sql.lstrip().upper()
        # A message of several statements writes what any of them writes (a near lookup and
        # the inserts after it; new entities inserted in a WITH).
        for piece in re.split(r";|WITH \w+ AS \(", head)[1:]:
            piece = piece.lstrip()
            if piece.startswith(("INSERT", "UPDATE", "DELETE")):
                writes.add(piece.split()[2 if piece.startswith(("INSERT", "DELETE")) else 1])
        if head.startswith("SAVEPOINT"):
            depth += 1
            if depth == 1:
                writes = set()
        elif head.startswith("RELEASE SAVEPOINT") or head.startswith("ROLLBACK TO SAVEPOINT"):
            if head.startswith("RELEASE"):
                depth -= 1
                if depth == 0 and writes - {'"MEMORIES_ACTIVITYLOG"'}:
                    count += 1
        elif head.startswith(("INSERT", "UPDATE", "DELETE")):
            table = head.split()[2 if head.startswith(("INSERT", "DELETE")) else 1]
            writes.add(table)
    return count


def database():
    """A connection of our own to the server's database, as Django's connections are set up."""
    import psycopg
    from django.conf import settings

    database = settings.DATABASES["default"]
    return psycopg.connect(
        dbname=database["NAME"],
        user=database["USER"],
        password=database.get("PASSWORD") or None,
        host=database["HOST"],
        port=database["PORT"] or None,
        autocommit=True,
        prepare_threshold=None,  # as Django's: every statement parsed and planned each time
    )


# The table.


def floor_ms(name: str, model: dict, sql: dict, commit: float, loopback: dict) -> float:
    return model[name] + sql[name].bare_ms + sql[name].commits * commit + loopback[name]


def show(title: str, times: dict, model: dict, sql: dict, commit: float, loopback: dict) -> None:
    print(f"\n{title} (ms)")
    header = ("request", "p50", "p95", "floor", "model", "SQL", "n", "loop", "p50/fl", "p95/fl")
    print("{:24s} {:>8s} {:>8s} {:>8s} {:>8s} {:>7s} {:>3s} {:>6s} {:>7s} {:>7s}".format(*header))
    for name in KINDS:
        if name not in times:
            continue
        p50, p95 = statistics.median(times[name]), percentile(times[name], 95)
        floor = floor_ms(name, model, sql, commit, loopback)
        statements = sql[name].bare_ms + sql[name].commits * commit
        print(
            f"{name:24s} {p50:8.1f} {p95:8.1f} {floor:8.1f} {model[name]:8.1f} "
            f"{statements:7.1f} {len(sql[name].statements):3d} {loopback[name]:6.2f} "
            f"{p50 / floor:6.2f}x {p95 / floor:6.2f}x"
        )


def show_statements(sql: dict, commit: float) -> None:
    print(
        "\nstatements of one request (ms: bare from psycopg, median; EXPLAIN plan + exec; "
        "a prepared one sent whole as before, then run with the plan its connection keeps)"
    )
    print(f"a commit that flushes the WAL: {commit:.2f} ms")
    for name in KINDS:
        captured = sql[name]
        print(
            f"{name}: {len(captured.statements)} statements, bare {captured.bare_ms:.1f}, "
            f"server {captured.server_ms:.1f}, {captured.commits} commit(s) with a flush"
        )
        for statement in captured.statements:
            explain = (
                f"{statement.planning:5.2f} +{statement.execution:6.2f}"
                if statement.execution is not None
                else " " * 13
            )
            print(f"  {statistics.median(statement.bare):6.2f}  {explain}  {statement.short}")
            if statement.kept:
                print(f"  {statistics.median(statement.kept):6.2f}  {'':13s}  (the plan kept)")


def show_targets(times: dict, model: dict, sql: dict, label: str) -> None:
    """The issue's ratios from these figures."""
    p50 = {name: statistics.median(values) for name, values in times.items()}
    # The search's statements: the text leg's (the product runs it while the model embeds the
    # query) and the ranking's; together they are what one search statement did until then.
    recall_statement = sum(
        s.floor
        for s in sql["recall, one scope"].statements
        if "fts_strict" in s.floor_sql or "hnsw.ef_search" in s.floor_sql
    )
    print(f"\n{label}:")
    for name in ("batch of 100 short", "batch of 100 chat turns"):
        print(f"  {name}: {model[name] / p50[name]:.2f} of the model's own rate (target >= 0.6)")
    extra = p50["remember (one memory)"] - model["remember (one memory)"]
    print(f"  remember: {extra:.1f} ms beyond the model's one short text (target <= 8)")
    bound = model["recall, one scope"] + recall_statement
    print(
        f"  recall: {p50['recall, one scope'] / bound:.2f}x (query embedding + its search "
        f"statements, {bound:.1f} ms) (target <= 1.3)"
    )
    gap = p50["build_context"] - p50["recall, one scope"]
    print(f"  build_context: recall + {gap:.1f} ms (target <= 10)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=40, help="per kind of single request")
    parser.add_argument("--batches", type=int, default=4, help="batches of 100 per kind")
    parser.add_argument("--rounds", type=int, default=4, help="requests and floors in turn")
    parser.add_argument(
        "--replays", type=int, default=2, help="bare runs of each statement a round"
    )
    parser.add_argument("--fresh", action="store_true", help="a new data directory, then removed")
    parser.add_argument("--busy", action="store_true", help="the same requests beside a writer")
    parser.add_argument("--busy-seconds", type=float, default=60)
    args = parser.parse_args()

    print(f"start: {load_average()}")
    fake = None
    if args.busy:  # the worker translates the writer's German turns through the fake LLM
        fake = fake_llm()
        os.environ.update(
            ANTHROPIC_API_KEY="bench-key",
            ANTHROPIC_BASE_URL=fake.url,
            NO_PROXY="127.0.0.1,localhost",
        )
    data_dir, state = data_dir_for(args.memories, 1, args.fresh or args.busy)
    baseline_port = free_port()
    baseline_server = start_baseline(baseline_port)
    busy_times: dict[str, list[float]] = {}
    try:
        with served(data_dir, keep_rate_limit=True) as port:
            setup_for(data_dir)
            state = prepared(port, data_dir, state, args.memories, 1)
            stamp = int(time.time()) % 100_000
            requests = Requests(state, stamp=stamp)
            calls = request_calls(requests)
            api, empty = Api(port, state["token"]), Api(baseline_port)
            turns, _ = conversations(5_000, 1)
            with worker_paused(server_pids(port)[0]), database() as conn:
                # Requests and floors in alternating rounds, so that both meet the same load.
                captured = {
                    name: capture(request, state["token"]) for name, request in calls.items()
                }
                statements = {
                    name: [Statement(sql) for sql in sqls] for name, (sqls, _) in captured.items()
                }
                for found in statements.values():
                    prepare_as_the_server(conn, found)
                idle: dict[str, list[float]] = {}
                loop: dict[str, list[float]] = {}
                model_samples: dict[str, list[float]] = {}
                commits: list[float] = []
                chats = [turn.content for turn in turns[0][:BATCH]]
                singles, batches = -(-args.requests // args.rounds), -(-args.batches // args.rounds)
                for number in range(args.rounds):
                    first = number == 0
                    sample(api, calls, idle, singles, batches, warm=first)
                    for name, request in calls.items():
                        timing = timed(lambda r=request: r(empty.call), 8, 2 if first else 0)
                        loop.setdefault(name, []).extend(timing)
                    model_round(state["questions"][0], chats, model_samples, first=first)
                    commits += commit_times(conn, 5)
                    for name, (_, moved) in captured.items():
                        replay(conn, statements[name], moved, args.replays)
                for name, (_, moved) in captured.items():
                    explain(conn, statements[name], moved)
                conn.execute("DROP TABLE bench_floor_commit")
                sql = {
                    name: Captured(statements[name], write_transactions(sqls))
                    for name, (sqls, _) in captured.items()
                }
                loopback = {name: statistics.median(values) for name, values in loop.items()}
                model, commit = model_floor(model_samples), statistics.median(commits)
            if args.busy:
                token = user_with_token("writer")
                scope = create_scope(Api(port, token), f"busy{stamp}")
                busy_script = str(ROOT / "bench" / "busy.py")
                command = [sys.executable, busy_script, "--write", str(port), token, scope]
                writer = subprocess.Popen(
                    [*command, str(args.busy_seconds)], stdout=subprocess.PIPE
                )
                shared: list[bool | None] = []
                per_round = max(3, args.requests // 8)
                while writer.poll() is None:
                    sample(api, calls, busy_times, per_round, 1, warm=False)
                    client_port = api.connection.sock.getsockname()[1] if api.connection.sock else 0
                    shared.append(shares_a_web_process(server_pids(port)[0], port, client_port))
                print(f"busy writer: {writer.stdout.read().decode().strip()}")
                print(
                    "the writer's connection in the timed client's web process: "
                    f"{shared.count(True)} of {len(shared)} rounds (else in another web process; "
                    "its batches are served by the bulk process either way)"
                )
    finally:
        baseline_server.kill()
        if fake is not None:
            fake.stop()
        if args.fresh or args.busy:
            shutil.rmtree(data_dir, ignore_errors=True)

    print(f"\n{args.memories} memories in one scope; one request at a time, one connection")
    show("idle, worker stopped", idle, model, sql, commit, loopback)
    if busy_times:
        show(
            "busy, beside a chat-turn writer and the worker",
            busy_times,
            model,
            sql,
            commit,
            loopback,
        )
    show_statements(sql, commit)
    show_targets(idle, model, sql, "idle, against the issue's targets")
    if busy_times:
        for name in ("recall, one scope",):
            ratio = percentile(busy_times[name], 95) / percentile(idle[name], 95)
            print(f"  busy recall p95: {ratio:.2f}x idle (target <= 1.5)")
            # Each busy round's recalls come first, right after the round before ended with the
            # client's own two batches: their times by place in the round.
            per_round = max(3, args.requests // 8)
            places = [busy_times[name][place::per_round] for place in range(per_round)]
            shown = " ".join(f"{statistics.median(times):.1f}" for times in places if times)
            print(f"  busy recall p50 by its place in the round (ms): {shown}")
        for name in ("remember (one memory)", "batch of 100 short", "batch of 100 chat turns"):
            rate = statistics.median(idle[name]) / statistics.median(busy_times[name])
            print(f"  busy {name}: {rate:.2f} of its idle rate")
    print(f"end: {load_average()}")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
