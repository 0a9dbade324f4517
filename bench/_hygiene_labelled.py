"""bench/hygiene.py's labelled set: pairs of memories with the relation a person would give them,
the verdict the scripted fake judge answers for each (mostly right, sometimes wrong, with varied
confidence), and the outcome the issue's rules demand, written out here independently of
memories/hygiene/auto_resolution.py so that the bench checks the product against the specification.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

SERVICES = [
    "billing", "search", "auth", "payments", "ingest", "reports", "gateway", "scheduler",
    "mailer", "exporter", "notifier", "catalog", "checkout", "profile", "invoicing", "ledger",
    "audit", "media", "geo", "pricing",
]  # fmt: skip
TEAMS = ["platform", "core", "data", "growth", "infra"]

# (label, memory A, memory B): A is written first. {s} a service, {S} it capitalised.
TEMPLATES = [
    ("duplicate", "The {s} service keeps its logs for 14 days.",
     "Logs of the {s} service are retained for two weeks."),
    ("duplicate", "Deploys of {s} go out every Tuesday morning.",
     "The {s} service is deployed each Tuesday morning."),
    ("duplicate", "The {s} database runs on PostgreSQL 16.",
     "{S} stores its data in a PostgreSQL 16 database."),
    ("b_supersedes_a", "The {s} request timeout is 30 seconds.",
     "The {s} request timeout was raised from 30 to 45 seconds."),
    ("b_supersedes_a", "The {s} service uses Redis for its job queue.",
     "The {s} service moved its job queue from Redis to PostgreSQL with SKIP LOCKED."),
    ("b_supersedes_a", "The {s} service is owned by the {t} team.",
     "Ownership of the {s} service moved from the {t} team to the {u} team."),
    ("contradiction", "Deploys of {s} are frozen on Fridays.",
     "The {s} service can be deployed on Fridays like any other day."),
    ("contradiction", "The {s} worker retries failed jobs three times.",
     "The {s} worker never retries a failed job."),
    ("contradiction", "The {s} API is versioned in the URL path.",
     "The {s} API is versioned through the Accept header, never the URL path."),
    ("complementary", "The {s} service exposes Prometheus metrics on port 9100.",
     "Prometheus scrapes the {s} metrics every 30 seconds."),
    ("complementary", "The {s} service reads its settings from config/{s}.yaml.",
     "Secrets of the {s} service come from the vault, not from config/{s}.yaml."),
    ("complementary", "The {s} integration tests need a running MinIO.",
     "The {s} integration tests take about six minutes in CI."),
    ("unrelated", "The {s} service logs JSON lines.",
     "The {u} team meets on Thursdays at 10:00."),
    ("unrelated", "The {s} service uses pnpm for its frontend.",
     "Refunds are processed by the finance team within five days."),
    ("unrelated", "The {s} dashboard has a dark mode.",
     "The VPN config lives in ops/vpn/wg0.conf."),
]  # fmt: skip
KINDS = ["fact", "decision", "convention", "gotcha", "preference", "reference", "fact", "fact"]
AUTHORS = ["human", "agent", "capture"]
RANK = {"human": 2, "agent": 1, "capture": 0}
PROTECTED = {"decision", "convention", "gotcha", "preference"}
RELATIONS = ["duplicate", "a_supersedes_b", "b_supersedes_a", "contradiction", "complementary",
             "unrelated"]  # fmt: skip


@dataclass(frozen=True)
class LabelledPair:
    label: str
    a: str
    b: str
    kind_a: str
    kind_b: str
    author_a: str
    author_b: str
    verdict: str  # what the scripted judge answers
    confidence: float

    def expected(self) -> tuple[str, str | None]:
        """(outcome, retired side) the issue's rules demand for the judge's verdict."""
        sides = {"a": (self.kind_a, self.author_a), "b": (self.kind_b, self.author_b)}

        def retirable(side: str) -> bool:
            kind, author = sides[side]
            return not (kind in PROTECTED and RANK[author] >= 1)

        if self.verdict in ("complementary", "unrelated"):
            return "cleared", None
        if self.verdict == "duplicate" and self.confidence >= 0.90:
            ranks = RANK[self.author_a], RANK[self.author_b]
            loser = ("a" if ranks[0] < ranks[1] else "b") if ranks[0] != ranks[1] else "a"
            return ("resolved", loser) if retirable(loser) else ("open", None)
        if self.verdict.endswith("_supersedes_a") or self.verdict.endswith("_supersedes_b"):
            retired = "b" if self.verdict == "a_supersedes_b" else "a"
            kept = "a" if retired == "b" else "b"
            higher = RANK[sides[retired][1]] > RANK[sides[kept][1]]
            if self.confidence >= 0.95 and not higher and retirable(retired):
                return "resolved", retired
        return "open", None


def _verdict(rng: random.Random, label: str) -> tuple[str, float]:
    """The scripted judge: right nine times in ten, at a confidence that varies; when wrong, a
    neighbouring relation at any confidence."""
    if rng.random() < 0.1:
        wrong = {
            "duplicate": "complementary",
            "b_supersedes_a": "contradiction",
            "contradiction": "b_supersedes_a",
            "complementary": "duplicate",
            "unrelated": "complementary",
        }[label]
        return wrong, round(rng.uniform(0.5, 0.99), 2)
    low = {"duplicate": 0.75, "b_supersedes_a": 0.8, "contradiction": 0.6}.get(label, 0.5)
    return label, round(rng.uniform(low, 1.0), 2)


def labelled_pairs(seed: int = 17) -> list[LabelledPair]:
    rng = random.Random(seed)
    pairs = []
    for index, service in enumerate(SERVICES):
        for number, (label, a, b) in enumerate(TEMPLATES):
            fill = {"s": service, "S": service.capitalize(), "t": TEAMS[index % 5],
                    "u": TEAMS[(index + 2) % 5]}  # fmt: skip
            kind = KINDS[(index + number) % len(KINDS)]
            verdict, confidence = _verdict(rng, label)
            pairs.append(
                LabelledPair(
                    label=label,
                    a=a.format(**fill),
                    b=b.format(**fill),
                    kind_a=kind,
                    kind_b=kind if rng.random() < 0.8 else rng.choice(KINDS),
                    author_a=rng.choice(AUTHORS),
                    author_b=rng.choice(AUTHORS),
                    verdict=verdict,
                    confidence=confidence,
                )
            )
    return pairs
