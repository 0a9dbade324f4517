"""The data set of bench/scale.py: the layout of a company's deployment (400 people with a
personal scope each, 80 team and project scopes of 2,000 to 50,000 memories at a million), its
users and memberships, the part written over HTTP and the copies made in SQL, stage by stage.

The texts are this file's own and bench/_chat.py's (chat turns like a watcher's episodes, and
short decisions, conventions, gotchas, preferences and facts); nothing is drawn from the shared
data sets.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from _chat import conversations, short_memory
from _server import Api

FULL = 1_000_000
PEOPLE = 400
SCOPES_PER_PERSON = 20  # the personal scope and 19 teams or projects
# Team and project scopes at a million memories: 800,000 in 80 scopes from 2,000 to 50,000.
TEAM_SIZES_AT_FULL = [50_000] * 5 + [20_000] * 15 + [8_000] * 20 + [2_250] * 40
PERSONAL_AT_FULL = 500  # 400 people × 500 = 200,000
BATCH = 100
COPY_PREFIX = "mem_k"  # the public ids of the copies made in SQL

SERVICES = ["billing", "search", "checkout", "auth", "ingest", "reports", "notifications", "maps"]
TOOLS = ["pytest", "docker compose", "terraform", "the linter", "alembic", "webpack", "pip"]
THINGS = ["feature flags", "database migrations", "API errors", "log lines", "cron jobs"]
TEMPLATES = {
    "decision": [
        "We moved the {service} service to a queue of its own so retries stop blocking checkout.",
        "Decided to keep {service} on PostgreSQL and drop the separate cache for {thing}.",
    ],
    "convention": [
        "Name {thing} after the {service} resource they touch, in snake_case.",
        "Every change to {thing} in {service} goes through a reviewed pull request.",
    ],
    "gotcha": [
        "{tool} hangs in the {service} repo unless the local database is running first.",
        "{tool} silently skips {thing} whose file names start with an underscore.",
    ],
    "preference": [
        "Prefers short pull requests for {service}, one idea each, with the test beside it.",
        "Likes {thing} explained with an example before the reference table.",
    ],
    "fact": ["{short}"],
}
# The watcher's mix: mostly episodes (what happened in a session), then what it distils.
KIND_SHARES = [
    ("episode", 0.55),
    ("fact", 0.15),
    ("decision", 0.1),
    ("convention", 0.08),
    ("gotcha", 0.07),
    ("preference", 0.05),
]


@dataclass
class Scope:
    key: str  # "team-07" or "person-123"
    size_at_full: int
    public_id: str = ""
    pk: int = 0

    def target(self, size: int) -> int:
        """Its memories when the data set holds `size`: its share of a million, scaled."""
        return max(1, round(self.size_at_full * size / FULL))


def layout() -> list[Scope]:
    teams = [Scope(f"team-{n:02d}", size) for n, size in enumerate(TEAM_SIZES_AT_FULL)]
    people = [Scope(f"person-{n:03d}", PERSONAL_AT_FULL) for n in range(PEOPLE)]
    return teams + people


def memberships(person: int, teams: int) -> list[int]:
    """The 19 teams a person belongs to; person 0 (the one measured) is in the largest."""
    chosen = random.Random(person).sample(range(teams), SCOPES_PER_PERSON - 1)
    if person == 0 and 0 not in chosen:
        chosen[0] = 0
    return chosen


def texts(count: int, seed: int) -> list[tuple[str, str]]:
    """(kind, content) pairs in the watcher's mix."""
    rng = random.Random(seed)
    turns, _ = conversations(count, 1)
    chat = iter(turn.content for turn in turns[0])
    kinds, weights = zip(*KIND_SHARES, strict=True)
    written = []
    for n in range(count):
        kind = rng.choices(kinds, weights)[0]
        if kind == "episode":
            written.append((kind, next(chat)))
            continue
        template = rng.choice(TEMPLATES[kind])
        text = template.format(
            service=rng.choice(SERVICES),
            tool=rng.choice(TOOLS),
            thing=rng.choice(THINGS),
            short=short_memory(seed * 100_000 + n),
        )
        written.append((kind, f"{text} (ticket {seed}-{n})"))
    return written


def create_people(admin_api: Api, scopes: list[Scope]) -> dict:
    """The admin's team scopes (over HTTP), 400 people (their personal scopes come with the
    account), their memberships, and tokens for the admin and person 0."""
    from _serving_data import user_with_token
    from django.contrib.auth import get_user_model

    from scopes.models import Membership, Role
    from scopes.models import Scope as ScopeRow

    users = get_user_model()
    teams = [scope for scope in scopes if scope.key.startswith("team-")]
    for scope in teams:
        status, answer = admin_api.call(
            "POST", "/api/v1/scopes", {"name": scope.key, "slug": scope.key, "kind": "project"}
        )
        assert status == 201, answer
        scope.public_id = answer["id"]
    team_rows = {row.public_id: row for row in ScopeRow.objects.filter(kind="project")}
    people = [scope for scope in scopes if scope.key.startswith("person-")]
    rows = []
    for number, scope in enumerate(people):
        # Not create_user: its password hashing would take minutes for 400 accounts.
        user = users.objects.create(username=scope.key, password="!")
        personal = ScopeRow.objects.get(kind="personal", owner=user)
        scope.public_id = personal.public_id
        for team in memberships(number, len(teams)):
            rows.append(
                Membership(scope=team_rows[teams[team].public_id], user=user, role=Role.WRITER)
            )
    Membership.objects.bulk_create(rows)
    for scope in scopes:
        scope.pk = ScopeRow.objects.get(public_id=scope.public_id).pk
    return {"person_token": user_with_token(people[0].key)}


def write_over_http(api: Api, scopes: list[Scope], first_size: int, http_part: int) -> float:
    """The part written through /api/v1/memories/batch: into the team scopes, in proportion to
    their size at the first stage. Returns memories per second."""
    teams = [scope for scope in scopes if scope.key.startswith("team-")]
    share = min(1.0, http_part / sum(scope.target(first_size) for scope in teams))
    started, written = time.perf_counter(), 0
    for number, scope in enumerate(teams):
        count = max(1, round(scope.target(first_size) * share))
        pending = texts(count, seed=number + 1)
        for start in range(0, count, BATCH):
            items = [
                {"content": content, "kind": kind, "scope": scope.public_id}
                for kind, content in pending[start : start + BATCH]
            ]
            status, answer = api.call("POST", "/api/v1/memories/batch", {"items": items})
            assert status == 200, answer
        written += count
    rate = written / (time.perf_counter() - started)
    print(f"  written over HTTP: {written} memories at {rate:.0f}/s", flush=True)
    return rate


_COLUMNS = """public_id, scope_id, kind_id, content, content_original, content_lang, content_hash,
    content_revision, translation_status, translation_attempts, translation_error,
    translation_claim, author_kind, agent_name, created_by_id, embedding,
    forgotten_reason, recall_count, valid_from, validity_gaps, created_at, updated_at"""

# Copies of the memories written over HTTP (the seeds), into any scope: the seed's text with a
# serial number, its embedding moved by a little noise, written at an instant of the past year.
_COPY = f"""
INSERT INTO memories_memory ({_COLUMNS})
SELECT '{COPY_PREFIX}' || md5(g::text), p.scope_id, m.kind_id, m.content || ' (' || g || ')',
       '', m.content_lang, md5(m.content || '-' || g), 1, m.translation_status, 0, '', '',
       m.author_kind, m.agent_name, m.created_by_id,
       m.embedding + (SELECT array_agg((random() - 0.5) * 0.04)::vector(384)
                      FROM generate_series(1, 384) WHERE g > 0),
       '', 0, t.at, false, t.at, t.at
FROM bench_copy_plan p
CROSS JOIN LATERAL generate_series(p.first, p.first + p.need - 1) g
JOIN bench_seed s ON s.n = (g * 7919) % (SELECT count(*) FROM bench_seed)
JOIN memories_memory m ON m.id = s.id
CROSS JOIN LATERAL (
    SELECT now() - random() * interval '365 days' AS at WHERE g > 0
) t
"""  # noqa: S608 (the module's own constants, no input)


def _template_insert(cursor, table: str, after: int) -> None:
    """One row of `table` for each copy past id `after`, its other columns those of a row the
    HTTP writes made (a provenance row, a validity period)."""
    cursor.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
        " AND column_name NOT IN ('id', 'memory_id', 'created_at', 'valid_from')"
        " AND is_generated = 'NEVER' ORDER BY ordinal_position",
        [table],
    )
    others = [name for (name,) in cursor.fetchall()]
    cursor.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
        " AND column_name IN ('created_at', 'valid_from')",
        [table],
    )
    dated = [name for (name,) in cursor.fetchall()]
    columns = ", ".join(["memory_id", *dated, *others])
    values = ", ".join(["m.id", *(f"m.{name}" for name in dated), *(f"t.{n}" for n in others)])
    cursor.execute(
        f"INSERT INTO {table} ({columns}) SELECT {values} FROM memories_memory m"  # noqa: S608
        f" CROSS JOIN (SELECT * FROM {table} ORDER BY id LIMIT 1) t"
        f" WHERE m.id > %s AND m.public_id LIKE '{COPY_PREFIX}%%'",
        [after],
    )


# The search copy's indexes (memories.models.search): dropped before a copy and built again
# after it, as a restore would; its primary key stays.
SEARCH_INDEXES = ("memorysearch_embedding_hnsw", "memorysearch_gin", "memorysearch_memory")
# The search rows of the copies, in one statement (the trigger is off while they are copied:
# row by row it would insert each into the partitions' indexes).
_FILL_SEARCH = """
INSERT INTO memories_memorysearch (scope_id, memory_id, kind_id, valid, valid_from, valid_until,
    validity_gaps, translation_status, embedding, search_vector)
SELECT m.scope_id, m.id, m.kind_id, m.valid, m.valid_from, m.valid_until, m.validity_gaps,
       m.translation_status, m.embedding, m.search_vector
FROM memories_memory m WHERE m.id > %s
"""


def grow(scopes: list[Scope], size: int, serial: int) -> tuple[int, dict[str, float]]:
    """Copy in SQL until each scope holds its share of `size`, with the search copy's indexes
    dropped before and built once after. Returns the next serial and the seconds of each step."""
    from django.db import connection

    timings = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT scope_id, count(*) FROM memories_memory GROUP BY scope_id",
        )
        held = dict(cursor.fetchall())
        plan = []
        for scope in scopes:
            need = scope.target(size) - held.get(scope.pk, 0)
            if need > 0:
                plan.append((scope.pk, serial, need))
                serial += need
        cursor.execute("SELECT coalesce(max(id), 0) FROM memories_memory")
        (after,) = cursor.fetchone()
        # A partitioned index's definition names the parent table ONLY; built again on it, it
        # is built on every partition.
        cursor.execute(
            "SELECT indexname, replace(indexdef, ' ON ONLY ', ' ON ') FROM pg_indexes"
            " WHERE tablename = 'memories_memorysearch' AND indexname = ANY(%s)",
            [list(SEARCH_INDEXES)],
        )
        definitions = dict(cursor.fetchall())
        for name in definitions:
            cursor.execute(f"DROP INDEX {name}")
        cursor.execute("DROP TABLE IF EXISTS bench_seed, bench_copy_plan")
        cursor.execute(
            "CREATE TEMP TABLE bench_seed AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, id"  # noqa: S608
            f" FROM memories_memory WHERE public_id NOT LIKE '{COPY_PREFIX}%%'"
        )
        cursor.execute(
            "CREATE TEMP TABLE bench_copy_plan (scope_id bigint, first bigint, need int)"
        )
        cursor.executemany("INSERT INTO bench_copy_plan VALUES (%s, %s, %s)", plan)
        started = time.perf_counter()
        cursor.execute("ALTER TABLE memories_memory DISABLE TRIGGER memory_search_insert")
        try:
            cursor.execute(_COPY)
            copied = cursor.rowcount
        finally:
            cursor.execute("ALTER TABLE memories_memory ENABLE TRIGGER memory_search_insert")
        _template_insert(cursor, "memories_validityperiod", after)
        _template_insert(cursor, "memories_provenance", after)
        timings["copy"] = time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute(_FILL_SEARCH, [after])
        timings["search_fill"] = time.perf_counter() - started
        print(
            f"  copied in SQL: {copied} memories in {timings['copy']:.0f} s, their search rows"
            f" in {timings['search_fill']:.0f} s",
            flush=True,
        )

        # The indexes' build, sized for this machine's memory: each partition's graph of 384
        # float4 dimensions is about 2 kB a memory, and a build that outgrows
        # maintenance_work_mem goes on far slower on disk.
        cursor.execute("SELECT count(*) FROM memories_memory")
        (memories,) = cursor.fetchone()
        work_mem_mb = max(256, min(4096, memories * 3 // 1000 // 4))
        cursor.execute(f"SET maintenance_work_mem = '{work_mem_mb}MB'")
        cursor.execute("SHOW max_parallel_maintenance_workers")
        (workers,) = cursor.fetchone()
        timings["index"] = timings["other_indexes"] = 0.0
        for name, definition in definitions.items():
            started = time.perf_counter()
            cursor.execute(definition)
            key = "index" if name == "memorysearch_embedding_hnsw" else "other_indexes"
            timings[key] += time.perf_counter() - started
        cursor.execute("RESET maintenance_work_mem")
        print(
            f"  HNSW indexes (16 partitions) built over {memories} memories in"
            f" {timings['index']:.0f} s, GIN and memory_id in {timings['other_indexes']:.0f} s"
            f" (maintenance_work_mem {work_mem_mb}MB, parallel workers {workers})",
            flush=True,
        )
        started = time.perf_counter()
        cursor.execute("VACUUM (ANALYZE) memories_memory")
        cursor.execute("VACUUM (ANALYZE) memories_memorysearch")
        cursor.execute("ANALYZE")
        timings["vacuum"] = time.perf_counter() - started
    return serial, timings
