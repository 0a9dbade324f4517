"""Recall quality on a labelled set, then recall and build_context latency at 100,000 memories.

    .venv/bin/python bench/recall.py [--memories 100000] [--rounds 2] [--skip-load]

1. Quality. A labelled set generated here from templates with a fixed seed: 1,110 memories of
   every kind in two scopes, and 210 queries that each have one known relevant memory:
   - paraphrase (60): the query shares no English lexeme with its memory (checked with the
     database's own `to_tsvector('english')`, the script stops if one does);
   - keyword (75): an error code, a file name, a function name or a config key, alone;
   - mixed (75): an identifier plus a paraphrase of what the memory says about it; three
     memories share each paraphrased statement, so only the identifier tells them apart.
   It prints recall@10 and MRR@10 for hybrid, vector-only and full-text-only recall.
2. Latency. It loads 100,000 more memories (a third in a scope the bench user cannot read, 300
   long ones with window embeddings), then prints p50/p95 of recall and build_context with the
   query embedding and without it (embeddings computed beforehand), the embedding alone, a
   briefing, and a trivial `SELECT 1` in the same process as a baseline for the machine.

Runs in a throwaway database (`bench_recall`) of the embedded server, never on the dev data.
Embeddings of the 100,000 texts are computed once and cached under bench/.cache/ (git-ignored);
the first run spends most of its time there. Prints figures; never fails on a threshold.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import random
import statistics
import time
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
from _django import ROOT, describe, percentile, setup, throwaway_database

CACHE = ROOT / "bench" / ".cache"
SEED = 20261129

# 1. The labelled set ---------------------------------------------------------------------------

# (kind, memory, paraphrase query sharing no lexeme with it)
PARAPHRASES = [
    (
        "decision",
        "We chose PostgreSQL over MongoDB because billing needs multi-row transactions.",
        "why did the team pick a relational engine instead of a document store",
    ),
    (
        "gotcha",
        "Never run schema migrations while the nightly backup holds its lock.",
        "danger of altering tables during the overnight snapshot",
    ),
    (
        "convention",
        "Git branch names start with the ticket number, then a short slug.",
        "how should I label my feature refs in version control",
    ),
    (
        "preference",
        "Dana wants pull request descriptions to include screenshots of UI changes.",
        "what does the designer expect to see when reviewing visual tweaks",
    ),
    (
        "fact",
        "The staging environment is rebuilt from scratch every Sunday night.",
        "when does the preprod setup get wiped and recreated",
    ),
    (
        "gotcha",
        "The payment provider sandbox rejects amounts with more than two decimals.",
        "test card charges fail when cents have extra precision",
    ),
    (
        "decision",
        "Feature flags are stored in LaunchDarkly, not in environment variables.",
        "where do toggles for unfinished functionality live",
    ),
    (
        "convention",
        "All timestamps in the API are ISO 8601 strings in UTC.",
        "what date format do endpoints return",
    ),
    (
        "fact",
        "Search indexing runs as a background worker fed by a Redis queue.",
        "how do documents become findable asynchronously",
    ),
    (
        "gotcha",
        "Safari caches the service worker aggressively, so a hard refresh does not pick up new "
        "builds.",
        "apple browser keeps serving stale frontend bundles after deploy",
    ),
    (
        "decision",
        "Mobile clients authenticate with short-lived JWTs refreshed every fifteen minutes.",
        "how long do phone app login sessions last before renewal",
    ),
    (
        "convention",
        "Python code is formatted with ruff and lines stop at one hundred characters.",
        "what linter and width limit does the backend style use",
    ),
    (
        "fact",
        "Customer support escalations go to the #help-oncall Slack channel.",
        "where should urgent client complaints be raised in chat",
    ),
    (
        "preference",
        "Priya prefers small pull requests under four hundred changed lines.",
        "how big should code reviews be for this engineer",
    ),
    (
        "gotcha",
        "The CSV importer silently drops rows whose encoding is Latin-1.",
        "spreadsheet uploads lose records with accented characters",
    ),
    (
        "decision",
        "Images are served through Cloudfront with a one year cache lifetime.",
        "how long do pictures stay in the CDN",
    ),
    (
        "fact",
        "The data warehouse refreshes from production replicas at 4am UTC.",
        "when is analytics copied from the live databases",
    ),
    (
        "convention",
        "Database tables use plural snake_case names.",
        "how are relations titled in the schema",
    ),
    (
        "gotcha",
        "Docker on macOS needs at least eight gigabytes of memory for the full stack.",
        "local containers crash on apple laptops without enough RAM",
    ),
    (
        "decision",
        "We retired the monolith's cron jobs in favour of Temporal workflows.",
        "what replaced scheduled tasks in the old backend",
    ),
    (
        "fact",
        "Invoices are numbered sequentially per country, restarting each January.",
        "how do bill identifiers reset at the start of the year",
    ),
    (
        "preference",
        "Marco likes code review comments phrased as questions, not commands.",
        "how to give feedback that this colleague appreciates",
    ),
    (
        "gotcha",
        "Elasticsearch rejects field names containing dots unless the mapping is flattened.",
        "search cluster errors on keys with periods in them",
    ),
    (
        "convention",
        "Every REST endpoint must have an OpenAPI description and an example.",
        "documentation requirements for new HTTP routes",
    ),
    (
        "fact",
        "The mobile app supports iOS 16 and Android 12 or newer.",
        "minimum phone operating system versions",
    ),
    (
        "decision",
        "Passwords are hashed with Argon2id using the library defaults.",
        "which algorithm protects stored user credentials",
    ),
    (
        "gotcha",
        "Kubernetes liveness probes kill the API during long garbage collection pauses.",
        "containers restarting when the runtime stalls to reclaim memory",
    ),
    (
        "fact",
        "Support answers tickets within four business hours on weekdays.",
        "response time promise for customer requests",
    ),
    (
        "convention",
        "Commit messages use the imperative mood and reference the issue.",
        "how to word change descriptions in history",
    ),
    (
        "gotcha",
        "Timezone conversion breaks for Samoa because it skipped a day in 2011.",
        "a Pacific island nation causes date bugs",
    ),
    (
        "decision",
        "Frontend state management uses Zustand instead of Redux.",
        "which store library handles client side data in the UI",
    ),
    (
        "fact",
        "The load balancer terminates TLS and forwards plain HTTP to pods.",
        "where does encryption end before traffic reaches containers",
    ),
    (
        "preference",
        "Lena wants standups kept under ten minutes.",
        "how long should the daily sync with this manager last",
    ),
    (
        "gotcha",
        "Generated PDFs look blank when the font is missing from the container image.",
        "rendered documents show empty pages because typefaces were not bundled",
    ),
    (
        "convention",
        "Secrets are loaded from Vault at startup and never written to disk.",
        "where do credentials come from when a service boots",
    ),
    (
        "fact",
        "Each tenant gets its own Postgres schema in the shared cluster.",
        "how are customers isolated inside one database server",
    ),
    (
        "decision",
        "We dropped GraphQL and went back to REST for public integrations.",
        "why did external partners lose the query language interface",
    ),
    (
        "gotcha",
        "Rate limits on the geocoding vendor reset at midnight Pacific time, not UTC.",
        "address lookup quota renews on the west coast clock",
    ),
    (
        "convention",
        "Feature work needs a design doc once it touches more than two services.",
        "when is a written proposal required for larger changes",
    ),
    (
        "fact",
        "Nightly end-to-end tests run against a copy of yesterday's production data.",
        "what dataset do the overnight browser suites use",
    ),
    (
        "gotcha",
        "Leaving a debugger breakpoint in a Celery task freezes the whole worker pool.",
        "background jobs hang when someone pauses execution to inspect code",
    ),
    (
        "decision",
        "Logs are shipped to Loki and kept for thirty days.",
        "how long is application output retained in the observability stack",
    ),
    (
        "preference",
        "Tom prefers async written updates over meetings.",
        "how does this teammate like to hear about progress",
    ),
    (
        "fact",
        "The public status page is hosted outside our own infrastructure.",
        "where is the uptime dashboard for customers served from",
    ),
    (
        "convention",
        "Monetary amounts are stored as integer cents, never floats.",
        "how do we represent money in the database",
    ),
    (
        "gotcha",
        "The iOS build fails if Xcode's command line tools point at an old version.",
        "apple compile errors from outdated developer toolchain selection",
    ),
    (
        "decision",
        "Analytics events go through Segment so we can switch vendors later.",
        "why is tracking routed via a customer data platform",
    ),
    (
        "fact",
        "Deploys to production need approval from two engineers.",
        "how many people must sign off before releasing live",
    ),
    (
        "gotcha",
        "Webhook signatures fail verification if the body is parsed before hashing.",
        "callback authenticity check breaks when JSON gets decoded too early",
    ),
    (
        "convention",
        "Pull requests need one approving review and green CI before merge.",
        "gate conditions for landing code on main",
    ),
    (
        "fact",
        "The recommendation model is retrained every Monday on the last ninety days of clicks.",
        "how often does the suggestion algorithm learn from user behaviour",
    ),
    (
        "gotcha",
        "Copying the production database to laptops violates our data protection policy.",
        "is it allowed to take customer records home on a personal machine",
    ),
    (
        "decision",
        "Internal tools are built with Django admin rather than a custom frontend.",
        "what framework powers the back-office screens",
    ),
    (
        "preference",
        "Aiko likes diagrams in architecture documents, drawn with Excalidraw.",
        "what visuals does this architect want in design writeups",
    ),
    (
        "fact",
        "Email is sent through Postmark, with SES as the fallback provider.",
        "which service delivers outgoing mail and what is the backup",
    ),
    (
        "gotcha",
        "Changing a Redis key format requires flushing the cache or old readers crash.",
        "altering the entry layout in the in-memory store breaks consumers unless it is emptied",
    ),
    (
        "convention",
        "User-facing strings go through gettext so they can be translated.",
        "how is interface text prepared for localisation",
    ),
    (
        "fact",
        "The CDN purges cached assets automatically on every deploy.",
        "are static files invalidated after a release",
    ),
    (
        "decision",
        "Search uses hybrid ranking: vectors plus keyword matching fused by reciprocal rank.",
        "how are semantic and lexical retrieval results combined",
    ),
    (
        "gotcha",
        "Uploading files larger than 100 MB through the API times out at the proxy.",
        "big attachments fail at the gateway during transfer",
    ),
]

# (what a memory says about an identifier, the same said in other words)
STATEMENTS = [
    (
        "retries the bank export three times before paging on-call",
        "how many attempts before someone gets woken up",
    ),
    ("must be called inside a database transaction", "needs an atomic block around it"),
    ("is deprecated and will be removed next quarter", "going away soon, stop relying on it"),
    (
        "leaks file handles when the upload is cancelled",
        "resource exhaustion after aborted transfers",
    ),
    (
        "is only safe to run from a single worker at a time",
        "concurrency hazard with parallel processes",
    ),
    ("returns amounts in cents, not euros", "monetary unit of its output"),
    (
        "caches results for five minutes per tenant",
        "how long are answers memoised for each customer",
    ),
    ("writes audit entries for every admin action", "records who changed what in the back office"),
    ("blocks the event loop when given large payloads", "async server stalls with big inputs"),
    (
        "sends the weekly digest email on Monday morning",
        "newsletter delivery at the beginning of every working cycle",
    ),
    ("validates VAT numbers against the EU registry", "checks European tax ids remotely"),
    (
        "compresses images to WebP before storing them",
        "shrinks pictures into a modern format on save",
    ),
    (
        "is the single source of truth for feature entitlements",
        "decides which plan unlocks what functionality",
    ),
    (
        "falls back to English when a translation is missing",
        "default language if localisation absent",
    ),
    (
        "requires the admin role and a fresh login",
        "needs elevated privileges plus recent authentication",
    ),
    (
        "parses dates in the user's local timezone",
        "interprets calendar input relative to where someone lives",
    ),
    ("rounds half to even when computing tax", "banker's method for levies"),
    (
        "pages the on-call engineer after three consecutive failures",
        "alerting threshold for repeated errors",
    ),
    (
        "is slow on cold start because it loads the ML model",
        "first request latency due to inference weights",
    ),
    (
        "deletes soft-deleted rows older than ninety days",
        "purging tombstoned records after a quarter",
    ),
    (
        "signs URLs that expire after fifteen minutes",
        "temporary links with a short validity window",
    ),
    (
        "emits metrics to Prometheus under the billing namespace",
        "observability counters for invoicing",
    ),
    (
        "dedupes webhook deliveries by idempotency key",
        "ignoring repeated callbacks with the same token",
    ),
    ("holds a global lock while rebuilding the search index", "exclusive mutex during reindexing"),
    (
        "streams CSV exports instead of building them in memory",
        "spreadsheet downloads without loading everything into RAM",
    ),
]

SYLLABLES = [
    "zor",
    "vex",
    "qua",
    "lin",
    "dra",
    "mok",
    "tesh",
    "pli",
    "nor",
    "gav",
    "rux",
    "bel",
    "fen",
    "tor",
    "yam",
    "kli",
    "sud",
    "wep",
    "jon",
    "hix",
    "bra",
    "cus",
    "dol",
    "fim",
    "gor",
    "hul",
    "jas",
    "kev",
    "lom",
    "mur",
    "nix",
    "oda",
    "pev",
    "quo",
    "ris",
    "sap",
    "tul",
    "ulv",
    "vim",
    "wox",
    "yel",
    "zun",
]
ID_VERBS = [
    "flush",
    "sync",
    "load",
    "parse",
    "build",
    "merge",
    "emit",
    "fetch",
    "purge",
    "render",
    "resolve",
    "index",
]
ID_NOUNS = [
    "batch",
    "ledger",
    "queue",
    "cache",
    "token",
    "report",
    "invoice",
    "bundle",
    "cursor",
    "snapshot",
    "shard",
]
FOLDERS = [
    "billing",
    "search",
    "auth",
    "ingest",
    "export",
    "notify",
    "gateway",
    "reports",
    "jobs",
    "admin",
]
KEYWORD_MEANINGS = [
    "the upstream connection was reset mid-request",
    "the lock on the tenant row timed out",
    "a signature did not match the payload",
    "the quota for the day is used up",
    "the schema version is older than the client",
    "a required header was missing",
]
KEYWORD_FILE_FACTS = [
    "holds the retry policy for outbound calls",
    "is where the nightly reconciliation starts",
    "defines the mapping from plans to limits",
    "owns the cleanup of expired sessions",
]
KEYWORD_FLAG_EFFECTS = [
    "turn on verbose tracing",
    "cap the worker pool",
    "skip the warm-up step",
    "switch to the read replica",
]

# Distractors (and the 100,000): domain sentences from templates with a shared vocabulary.
COMPONENTS = [
    "billing service",
    "search cluster",
    "auth gateway",
    "ingest pipeline",
    "export worker",
    "notification service",
    "scheduler",
    "API gateway",
    "admin dashboard",
    "mobile app",
    "web frontend",
    "data warehouse",
    "payment webhook",
    "report builder",
    "job queue",
    "cache layer",
    "feature flag service",
    "audit log",
    "user directory",
    "file storage",
    "email sender",
    "metrics pipeline",
    "CI runner",
    "deploy tooling",
    "tenant router",
    "rate limiter",
    "session store",
    "translation service",
    "PDF renderer",
    "import wizard",
]
TECH = [
    "PostgreSQL",
    "Redis",
    "Kafka",
    "RabbitMQ",
    "Celery",
    "Django",
    "React",
    "TypeScript",
    "Go",
    "Rust",
    "Terraform",
    "Kubernetes",
    "Docker",
    "Nginx",
    "S3",
    "GCS",
    "BigQuery",
    "Sentry",
    "Grafana",
    "Prometheus",
    "OpenTelemetry",
    "gRPC",
    "GraphQL",
    "Stripe",
    "Twilio",
    "Auth0",
    "Vault",
    "Helm",
    "Airflow",
    "dbt",
]
ACTIONS = [
    "migrate",
    "rewrite",
    "split",
    "merge",
    "deprecate",
    "cache",
    "shard",
    "replicate",
    "monitor",
    "load-test",
    "document",
    "containerise",
    "rate-limit",
    "encrypt",
    "audit",
    "refactor",
    "version",
    "benchmark",
    "harden",
    "profile",
]
BEHAVIOURS = [
    "times out",
    "drops messages",
    "leaks memory",
    "returns stale data",
    "double-charges",
    "deadlocks",
    "retries forever",
    "logs secrets",
    "crashes on startup",
    "loses sessions",
    "slows down",
    "fills the disk",
]
CONDITIONS = [
    "the queue backs up",
    "traffic spikes",
    "a deploy is half done",
    "the replica lags",
    "a tenant is deleted",
    "clocks drift",
    "the token expires",
    "a migration is running",
    "the cache is cold",
    "two workers race",
]
TIMES = [
    "every night",
    "on Mondays",
    "at the end of each month",
    "after each deploy",
    "hourly",
    "on every login",
    "twice a day",
    "at quarter end",
]
PEOPLE = [
    "Ana",
    "Ben",
    "Chloe",
    "Dev",
    "Elif",
    "Femi",
    "Goran",
    "Hana",
    "Ivan",
    "Jae",
    "Kofi",
    "Lea",
    "Mina",
    "Noor",
    "Omar",
    "Pia",
]
THINGS = [
    "short functions",
    "typed interfaces",
    "feature branches",
    "pair programming",
    "written specs",
    "small commits",
    "dark mode",
    "tabs",
    "integration tests",
    "async reviews",
    "squash merges",
]
DISTRACTOR_TEMPLATES = {
    "fact": [
        "The {component} runs on {tech} and is restarted {time}.",
        "The {component} talks to the {component2} through {tech}.",
        "The {component} keeps {n} days of history in {tech}.",
    ],
    "decision": [
        "We decided to {action} the {component} using {tech}.",
        "The team chose {tech} for the {component} after the {n}-week trial.",
    ],
    "convention": [
        "Code in the {component} must be reviewed by someone from the {component2} team.",
        "Every change to the {component} needs a {tech} dashboard before release.",
    ],
    "gotcha": [
        "Watch out: the {component} {behaviour} when {condition}.",
        "The {component} {behaviour} if {tech} is upgraded without a restart.",
    ],
    "task": [
        "TODO: {action} the {component} before the {n}th.",
        "Follow up on why the {component} {behaviour} when {condition}.",
    ],
    "episode": [
        "During incident {n} the {component} {behaviour} while {condition}.",
        "Yesterday's release of the {component} was rolled back after it {behaviour}.",
    ],
    "open_question": [
        "Should we {action} the {component} with {tech}?",
        "Who owns the {component} now that the {component2} moved teams?",
    ],
    "reference": [
        "The runbook for the {component} is at docs/runbooks/{slug}.md.",
        "Dashboards for the {component} live in {tech} under the {slug} folder.",
    ],
    "preference": [
        "{person} prefers {thing} when working on the {component}.",
        "{person} wants {thing} for anything touching the {tech} setup.",
    ],
}
KIND_WEIGHTS = {
    "fact": 25,
    "decision": 12,
    "convention": 10,
    "gotcha": 10,
    "task": 10,
    "episode": 12,
    "open_question": 6,
    "reference": 8,
    "preference": 7,
}


@dataclass(frozen=True)
class Item:
    kind: str
    content: str
    scope: str  # "team" | "personal" | "foreign"


@dataclass(frozen=True)
class Query:
    text: str
    relevant: int  # index into the labelled memories
    type: str


def _nonsense(rng: random.Random, used: set[str], parts: int = 2) -> str:
    """A made-up word; two-syllable ones are unique (the labelled set's identifiers)."""
    while True:
        word = "".join(rng.choice(SYLLABLES) for _ in range(parts))
        if parts > 2:
            return word
        if word not in used:
            used.add(word)
            return word


def _identifier(rng: random.Random, used: set[str], style: str, parts: int = 2) -> str:
    word = _nonsense(rng, used, parts)
    if style == "function":
        return f"{rng.choice(ID_VERBS)}_{word}_{rng.choice(ID_NOUNS)}"
    if style == "file":
        return f"{rng.choice(FOLDERS)}/{word}_{rng.choice(ID_NOUNS)}.py"
    if style == "flag":
        return f"ZM_{word.upper()}_{rng.choice(ID_NOUNS).upper()}"
    if style == "code":
        return f"ERR_{word.upper()}_{rng.randint(100, 999)}"
    return f"E{rng.randint(1000, 9999)}{word[:2].upper()}"


def distractor(rng: random.Random, kind: str) -> str:
    component, component2 = rng.sample(COMPONENTS, 2)
    return rng.choice(DISTRACTOR_TEMPLATES[kind]).format(
        component=component,
        component2=component2,
        tech=rng.choice(TECH),
        action=rng.choice(ACTIONS),
        behaviour=rng.choice(BEHAVIOURS),
        condition=rng.choice(CONDITIONS),
        time=rng.choice(TIMES),
        person=rng.choice(PEOPLE),
        thing=rng.choice(THINGS),
        slug=component.replace(" ", "-").lower(),
        n=rng.randint(2, 90),
    )


def labelled_set() -> tuple[list[Item], list[Query]]:
    rng = random.Random(SEED)
    used: set[str] = set()
    items: list[Item] = []
    queries: list[Query] = []

    def add(kind: str, content: str, query: str, qtype: str) -> None:
        queries.append(Query(query, len(items), qtype))
        items.append(Item(kind, content, rng.choice(["team", "personal"])))

    for kind, content, query in PARAPHRASES:
        add(kind, content, query, "paraphrase")
    styles = ["code", "short", "function", "file", "flag"]
    for i in range(75):
        style = styles[i % len(styles)]
        ident = _identifier(rng, used, style)
        if style == "code" or style == "short":
            content = f"Error {ident} means {rng.choice(KEYWORD_MEANINGS)}; retry after a minute."
        elif style == "function":
            file = _identifier(rng, used, "file")
            content = f"{ident}() in {file} {rng.choice(KEYWORD_FILE_FACTS)}."
        elif style == "file":
            content = f"{ident} {rng.choice(KEYWORD_FILE_FACTS)}."
        else:
            content = f"Set {ident}=1 to {rng.choice(KEYWORD_FLAG_EFFECTS)}."
        add(rng.choice(["fact", "gotcha", "reference"]), content, ident, "keyword")
    mixed_styles = ["function", "file", "flag"]
    for n, (statement, paraphrase) in enumerate(STATEMENTS):
        for j in range(3):
            ident = _identifier(rng, used, mixed_styles[(n + j) % 3])
            subject = f"{ident}()" if ident.count("_") == 2 and "/" not in ident else ident
            if ident.startswith("ZM_"):
                subject = f"The flag {ident}"
            add(
                rng.choice(["fact", "gotcha", "convention"]),
                f"{subject} {statement}.",
                f"{ident} {paraphrase}",
                "mixed",
            )
    seen = {item.content for item in items}
    kinds = list(KIND_WEIGHTS)
    weights = list(KIND_WEIGHTS.values())
    while len(items) < 1110:
        kind = rng.choices(kinds, weights)[0]
        text = distractor(rng, kind)
        if text not in seen:
            seen.add(text)
            items.append(Item(kind, text, rng.choice(["team", "personal"])))
    return items, queries


def bulk_texts(count: int, taken: set[str]) -> list[Item]:
    """`count` more memories: short domain sentences, some long ones (windows), 3 scopes."""
    rng = random.Random(SEED + 1)
    used: set[str] = set()
    kinds = list(KIND_WEIGHTS)
    weights = list(KIND_WEIGHTS.values())
    items: list[Item] = []
    seen = set(taken)
    long_every = 333  # 300 long memories in 100,000
    while len(items) < count:
        kind = rng.choices(kinds, weights)[0]
        if len(items) % long_every == long_every - 1:
            text = " ".join(distractor(rng, rng.choice(kinds)) for _ in range(24))
        else:
            text = distractor(rng, kind)
            if rng.random() < 0.5:  # identifiers make most texts unique, as in real notes
                style = rng.choice(["function", "file", "code"])
                # Three syllables: never one of the labelled set's two-syllable names.
                text += f" See {_identifier(rng, used, style, parts=3)}."
        if text in seen:
            continue
        seen.add(text)
        scope = rng.choices(["team", "personal", "foreign"], [40, 30, 30])[0]
        items.append(Item(kind, text, scope))
    return items


# Loading ---------------------------------------------------------------------------------------


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

    from memories.embeddings import windows_for
    from memories.services.common import content_hash
    from zeromemory.core.ids import new_public_id

    now = timezone.now()
    columns = (
        "public_id, scope_id, kind_id, content, content_original, content_lang, content_hash, "
        "content_revision, translation_status, translation_attempts, translation_error, "
        "translation_claim, author_kind, agent_name, embedding, valid, forgotten_reason, "
        "recall_count, created_at, updated_at"
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
            "t",
            "",
            "0",
            created,
            created,
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


SEARCH_INDEXES = ("memory_embedding_hnsw", "window_embedding_hnsw", "memory_search_gin")


def drop_search_indexes() -> list[str]:
    """Drop the vector and full-text indexes before a bulk load; returns their definitions."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(SEARCH_INDEXES)]
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
        cursor.execute("VACUUM ANALYZE memories_memorywindow")
    return time.perf_counter() - started


# Measuring -------------------------------------------------------------------------------------


def no_shared_lexemes(pairs: list[tuple[str, str]]) -> list[tuple[str, str, list[str]]]:
    from django.db import connection

    clashes = []
    with connection.cursor() as cursor:
        for memory, query in pairs:
            cursor.execute(
                "SELECT ARRAY(SELECT unnest(tsvector_to_array(to_tsvector('english', %s))) "
                "INTERSECT SELECT unnest(tsvector_to_array(to_tsvector('english', %s))))",
                [memory, query],
            )
            shared = cursor.fetchone()[0]
            if shared:
                clashes.append((memory, query, shared))
    return clashes


def quality(actor, queries: list[Query], public_ids: list[str], mode: str) -> dict[str, dict]:
    from memories.search import recall

    ranks: dict[str, list[int | None]] = {}
    for query in queries:
        found = [hit.id for hit in recall(actor=actor, query=query.text, k=10, mode=mode)]
        target = public_ids[query.relevant]
        rank = found.index(target) + 1 if target in found else None
        ranks.setdefault(query.type, []).append(rank)
        ranks.setdefault("all", []).append(rank)
    return {
        qtype: {
            "recall@10": sum(r is not None for r in values) / len(values),
            "mrr": sum(1 / r for r in values if r is not None) / len(values),
            "n": len(values),
        }
        for qtype, values in ranks.items()
    }


def print_quality(title: str, results: dict[str, dict[str, dict]]) -> None:
    print(title)
    print(f"  {'mode':10} {'all':>17} {'paraphrase':>17} {'keyword':>17} {'mixed':>17}")
    print(f"  {'':10}" + "   recall@10   MRR" * 4)
    for mode, by_type in results.items():
        cells = "".join(
            f"   {by_type[t]['recall@10']:9.3f} {by_type[t]['mrr']:5.3f}"
            for t in ("all", "paraphrase", "keyword", "mixed")
        )
        print(f"  {mode:10}{cells}")


def timed(function, arguments: list, rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        for argument in arguments:
            started = time.perf_counter()
            function(argument)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def explain_recall(actor, query: str) -> str:
    """EXPLAIN ANALYZE of one real recall statement: which indexes the legs use."""
    from django.db import connection

    from memories import search

    plans: list[str] = []

    def explain(execute, sql, params, many, context):
        if "WITH input" in sql and not plans:
            head, _, tail = sql.partition("WITH input")
            execute(f"{head}EXPLAIN (ANALYZE, COSTS OFF) WITH input{tail}", params, many, context)
            cursor = context["cursor"]
            while cursor.nextset():
                pass
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(explain):
        search.search(query=query, selection=search.select_scopes(actor=actor, scopes=None), k=10)
    return plans[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="latency passes over the queries")
    parser.add_argument("--skip-load", action="store_true", help="quality only")
    parser.add_argument("--plan", action="store_true", help="print the full EXPLAIN ANALYZE")
    args = parser.parse_args()
    setup()

    from django.contrib.auth import get_user_model
    from django.db import connection

    from memories import embeddings
    from memories.context import briefing, build_context
    from memories.search import recall
    from scopes.models import ScopeKind
    from scopes.services import scope_create
    from zeromemory.core.actor import Actor

    items, queries = labelled_set()
    rng = random.Random(SEED + 2)
    with throwaway_database("bench_recall"):
        clashes = no_shared_lexemes(
            [(items[q.relevant].content, q.text) for q in queries if q.type == "paraphrase"]
        )
        clashes += no_shared_lexemes(STATEMENTS)
        if clashes:
            for memory, query, shared in clashes:
                print(f"shared lexemes {shared}: {memory!r} / {query!r}")
            raise SystemExit("a paraphrase shares words with its memory; fix the labelled set")
        users = get_user_model().objects
        user = users.create_user("bench", password="bench-password-1")
        other = users.create_user("other", password="bench-password-1")
        scopes = {
            "personal": user.owned_scopes.get(kind=ScopeKind.PERSONAL),
            "team": scope_create(actor=Actor(user=user), name="Team", slug="team", kind="team"),
            "foreign": other.owned_scopes.get(kind=ScopeKind.PERSONAL),
        }
        actor = Actor(user=user, client_name="bench")
        print(f"labelled set: {len(items)} memories, {len(queries)} queries", end=" ")
        counts = {t: sum(q.type == t for q in queries) for t in ("paraphrase", "keyword", "mixed")}
        print("(" + ", ".join(f"{n} {t}" for t, n in counts.items()) + ")")
        started = time.perf_counter()
        vectors = np.asarray(embeddings.embed_texts([item.content for item in items]), np.float32)
        print(f"  embedded in {time.perf_counter() - started:.1f} s")
        definitions = drop_search_indexes()
        labelled_ids = load(items, vectors, scopes, [0.0] * len(items))
        create_search_indexes(definitions)

        modes = ("hybrid", "vector", "fulltext")
        results = {mode: quality(actor, queries, labelled_ids, mode) for mode in modes}
        print_quality("quality on the labelled set (1,110 memories):", results)
        if args.skip_load:
            return

        bulk = bulk_texts(args.memories, {item.content for item in items})
        print(f"loading {len(bulk)} more memories (embeddings cached in bench/.cache/)", flush=True)
        bulk_vectors = embed_cached([item.content for item in bulk], "recall-bulk")
        started = time.perf_counter()
        drop_search_indexes()
        load(bulk, bulk_vectors, scopes, [rng.uniform(0, 1000) for _ in bulk])
        print(f"  copied in {time.perf_counter() - started:.1f} s", end="; ")
        print(f"indexes rebuilt in {create_search_indexes(definitions):.1f} s")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*), count(*) FILTER (WHERE scope_id <> %s) FROM memories_memory",
                [scopes["foreign"].id],
            )
            total, readable = cursor.fetchone()
            cursor.execute("SELECT count(*) FROM memories_memorywindow")
            windows = cursor.fetchone()[0]
        print(f"  {total} memories ({readable} readable by the bench user), {windows} windows")

        results = {mode: quality(actor, queries, labelled_ids, mode) for mode in modes}
        print_quality(f"quality on the labelled set among all {total} memories:", results)

        plan = explain_recall(actor, queries[0].text)
        uses = {
            name: name in plan
            for name in ("memory_embedding_hnsw", "window_embedding_hnsw", "memory_search_gin")
        }
        print(
            "plan at full size: "
            + ", ".join(f"{k} {'used' if v else 'NOT used'}" for k, v in uses.items())
        )
        if args.plan:
            print(plan)

        texts = [q.text for q in queries]
        rng.shuffle(texts)
        for text in texts[:20]:  # warm up: model, plans, buffers
            recall(actor=actor, query=text)
            build_context(actor=actor, topic=text)

        def trivial(_):
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()

        baseline = timed(trivial, list(range(500)), 1)
        embed = timed(embeddings.embed_query, texts, 1)
        with_embedding = timed(lambda t: recall(actor=actor, query=t), texts, args.rounds)
        context_with = timed(lambda t: build_context(actor=actor, topic=t), texts, 1)

        cached = {text: embeddings.embed_query(text) for text in texts}
        real_embed_query = embeddings.embed_query
        embeddings.embed_query = cached.__getitem__
        try:
            without_embedding = timed(lambda t: recall(actor=actor, query=t), texts, args.rounds)
            context_without = timed(lambda t: build_context(actor=actor, topic=t), texts, 1)
        finally:
            embeddings.embed_query = real_embed_query
        briefings = timed(lambda _: briefing(actor=actor), list(range(50)), 1)

        print(f"latency at {total} memories ({len(texts)} queries; k=10, max_tokens=2000):")
        print(f"  recall, with the query embedding     {describe(with_embedding)}")
        print(f"  recall, embedding computed before    {describe(without_embedding)}")
        print(f"  build_context, with the embedding    {describe(context_with)}")
        print(f"  build_context, embedding before      {describe(context_without)}")
        print(f"  query embedding alone                {describe(embed)}")
        print(f"  briefing (no topic)                  {describe(briefings)}")
        print(f"  baseline SELECT 1                    {describe(baseline)}")
        base = statistics.median(baseline)
        print(
            "  p50 / baseline p50: "
            f"recall {statistics.median(with_embedding) / base:.0f}x, "
            f"build_context {statistics.median(context_with) / base:.0f}x"
        )
        targets = (
            percentile(with_embedding, 95) <= 50,
            percentile(context_with, 95) <= 100,
        )
        print(
            f"  targets (p95 recall <= 50 ms, build_context <= 100 ms, with embedding): "
            f"{'met' if all(targets) else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
