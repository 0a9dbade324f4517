"""build_context() and briefing(): sections, budgets, truncation, ranking.

The REST endpoints are tested in test_context_api.py."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memories import tasks
from memories.models import Memory
from memories.recall.budget import count_tokens
from memories.recall.context import briefing, build_context
from memories.recall.inputs import ScopeSelection
from memories.recall.sections import important_rows, loop_rows
from tests.factories import stored_memory
from tests.memories.recall_support import age, remember_all
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed


def section(result, name):
    return next(s for s in result.sections if s.name == name)


def row_ids(result, name):
    return [row.candidate.id for row in section(result, name).rows]


@pytest.fixture
def owner(tenancy):
    return Actor(user=tenancy.owner)


def test_sections_relevant_recent_and_open_loops(owner, project):
    _, memories = project
    result = build_context(actor=owner, topic="how does the billing run work", max_tokens=2000)
    assert [s.name for s in result.sections] == ["relevant", "recent", "open_loops"]
    relevant = row_ids(result, "relevant")
    assert relevant[0] in {memories[0].public_id, memories[2].public_id}
    recent = row_ids(result, "recent")
    open_loops = row_ids(result, "open_loops")
    shown = relevant + recent + open_loops
    assert len(shown) == len(set(shown))  # each memory once, in the first section that has it
    # Recent: decisions and conventions of the last two weeks, newest first, none shown above.
    recent_kinds = {row.candidate.kind for row in section(result, "recent").rows}
    assert recent_kinds <= {"decision", "convention"}
    assert memories[6].public_id not in recent  # forty days old
    # Open loops: tasks and questions, oldest first.
    loops = [m for m in (memories[7], memories[3], memories[4]) if m.public_id not in relevant]
    assert open_loops == [m.public_id for m in loops]
    assert result.markdown.startswith("# Context\n")
    assert "## Open loops (oldest first)" in result.markdown


def test_json_and_markdown_say_the_same(owner, project):
    result = build_context(actor=owner, topic="billing", max_tokens=2000).as_dict()
    assert result["topic"] == "billing" and result["max_tokens"] == 2000
    for part in result["sections"]:
        for row in part["rows"]:
            assert f"({row['id']})" in result["markdown"]
            assert set(row) == {
                "id",
                "kind",
                "scope",
                "content",
                "truncated",
                "tokens",
                "score",
                "age_days",
                "disputed",
                "stale",
                "group",
            }


@pytest.mark.parametrize("max_tokens", [100, 120, 160, 250, 400, 800, 3000])
def test_the_budget_is_never_exceeded(tenancy, owner, team, max_tokens):
    filler = (
        "Retries use exponential backoff with jitter, capped at five attempts, and the worker "
        "records each failure with its traceback so the dashboard can show why a job failed. "
    )
    remember_all(
        tenancy.owner,
        [(f"Job queue rule {i}: " + filler * (1 + i % 4), "convention") for i in range(12)]
        + [(f"Task {i}: tune the retry policy of queue {i}. " + filler, "task") for i in range(8)]
        + [(f"Question {i}: should queue {i} retry forever?", "open_question") for i in range(4)],
        scope=team,
    )
    for result in (
        build_context(actor=owner, topic="job retries", max_tokens=max_tokens),
        briefing(actor=owner, max_tokens=max_tokens),
    ):
        assert count_tokens(result.markdown) == result.tokens <= max_tokens
        header = count_tokens(result.markdown.splitlines()[0])
        assert header + sum(s.tokens for s in result.sections) == result.tokens
        assert sum(len(s.rows) for s in result.sections) >= 1
        for part in result.sections:
            for row in part.rows:
                assert row.tokens == count_tokens(row.line)
                if row.truncated:
                    assert row.content.endswith("…")
                    assert len(row.content) < len(row.candidate.content)


def test_a_row_counts_as_its_line_whatever_the_text(tenancy, owner, team):
    """A row's tokens are made from its parts (label, text, id) where the tokenizer splits at
    whitespace first: the same count as its whole line's, for texts with accents, CJK, emoji,
    glued punctuation, tabs and newlines."""
    texts = [
        "Deploys: run `make release`—then tag v2.3.1 (see CHANGELOG.md);done.",
        "Le déploiement échoue si la clé «API_KEY» manque\tdans l'environnement.",
        "デプロイ前に必ずテストを実行すること。Deploy checks run first.",
        "Ship it 🚀👩🏽‍💻 after   the\n\nreview, not before!!!",
        "Cafe\u0301 naïve résumé Ångström: deploy notes for the ops team.",
    ]
    remember_all(tenancy.owner, [(text, "convention") for text in texts], scope=team)
    result = build_context(actor=owner, topic="deploy", max_tokens=3000)
    assert count_tokens(result.markdown) == result.tokens
    shown = [row for part in result.sections for row in part.rows]
    assert len(shown) >= len(texts)
    for row in shown:
        assert row.tokens == count_tokens(row.line)


def test_a_row_cut_to_fit_is_marked_truncated(tenancy, owner, team):
    long_text = "The deploy checklist: " + " ".join(
        f"step {i} verify the {w} before moving on." for i, w in enumerate(["config"] * 80)
    )
    [memory] = remember_all(tenancy.owner, [(long_text, "convention")], scope=team)
    result = build_context(actor=owner, topic="deploy checklist", max_tokens=150)
    [row] = section(result, "relevant").rows
    assert row.truncated and row.candidate.id == memory.public_id
    assert long_text.startswith(row.content[:-1].rstrip())
    assert result.tokens <= 150
    assert (
        build_context(actor=owner, topic="deploy checklist", max_tokens=2000)
        .sections[0]
        .rows[0]
        .truncated
        is False
    )


def test_build_context_counts_relevant_rows_as_recalled_and_briefing_counts_nothing(owner, project):
    result = build_context(actor=owner, topic="billing run", max_tokens=2000)
    relevant = set(row_ids(result, "relevant"))
    others = set(row_ids(result, "recent") + row_ids(result, "open_loops"))
    tasks.fold_recall_counts()
    counts = dict(Memory.objects.values_list("public_id", "recall_count"))
    assert relevant and all(counts[i] == 1 for i in relevant)
    assert all(counts[i] == 0 for i in others)
    briefing(actor=owner, max_tokens=2000)
    tasks.fold_recall_counts()
    assert dict(Memory.objects.values_list("public_id", "recall_count")) == counts


def test_briefing_ranks_by_weight_decay_and_recall_frequency(tenancy, owner, team):
    plain, recalled, old_episode, new_episode = remember_all(
        tenancy.owner,
        [
            ("Service names are kebab-case.", "fact"),
            ("The cache layer is Redis 7.", "fact"),
            ("Yesterday the staging deploy failed on a missing env var.", "episode"),
            ("Today the release went out cleanly.", "episode"),
        ],
        scope=team,
    )
    Memory.objects.filter(pk=recalled.pk).update(recall_count=20)
    age(old_episode, 60)  # two half-lives of an episode
    result = briefing(actor=owner, max_tokens=2000)
    important = section(result, "important")
    assert [s.name for s in result.sections] == ["important", "recent", "open_loops"]
    assert row_ids(result, "important") == [
        recalled.public_id,
        plain.public_id,
        new_episode.public_id,
        old_episode.public_id,
    ]
    scores = [row.candidate.score for row in important.rows]
    assert scores[1] == pytest.approx(0.9, rel=1e-3)  # fact weight, no age, never recalled
    assert scores[0] == pytest.approx(scores[1] * (1 + 0.25 * 3.0445), rel=1e-3)  # ln(21)
    assert scores[3] == pytest.approx(0.7 * 0.25, rel=1e-2)
    assert result.topic is None and result.markdown.startswith("# Session briefing\n")


def test_foreign_scopes_stay_out_of_context_and_briefing(tenancy, owner, team, project):
    outsider = Actor(user=tenancy.outsider)
    remember_all(tenancy.outsider, [("Outsider decision about billing.", "decision")])
    mine = build_context(actor=owner, topic="billing", max_tokens=3000)
    assert {row.candidate.scope for s in mine.sections for row in s.rows} == {team}
    theirs = briefing(actor=outsider, max_tokens=3000)
    assert {row.candidate.scope for s in theirs.sections for row in s.rows} != {team}
    assert all(row.candidate.scope != team for s in theirs.sections for row in s.rows)
    with pytest.raises(NotFound):
        build_context(actor=outsider, topic="billing", max_tokens=500, scopes=[team])
    with pytest.raises(NotFound):
        briefing(actor=outsider, max_tokens=500, scopes=[team])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"topic": "", "max_tokens": 500}, "topic"),
        ({"topic": "x", "max_tokens": 99}, "max_tokens"),
        ({"topic": "x", "max_tokens": 32_001}, "max_tokens"),
        ({"topic": "x", "max_tokens": "500"}, "max_tokens"),
    ],
)
def test_bad_input_names_the_field(owner, kwargs, field):
    with pytest.raises(ValidationFailed) as refused:
        build_context(actor=owner, **kwargs)
    assert refused.value.field == field


def _reference_ranking(scope_ids):
    """Every valid memory of the scopes ranked as the briefing's statement ranks them (kind
    weight × age decay bounded at 100 half-lives × recall boost; the larger id first on a tie)."""
    now = timezone.now()
    rows = []
    for memory in Memory.objects.filter(scope__public_id__in=scope_ids, valid=True).select_related(
        "kind"
    ):
        age = max((now - memory.created_at).total_seconds() / 86400, 0)
        decay = 0.5 ** min(age / max(memory.kind.half_life_days, 1), 100)
        boost = 1 + 0.25 * math.log(1 + memory.recall_count)
        rows.append((memory.kind.weight * decay * boost, memory.pk, memory.public_id))
    return [public_id for _, _, public_id in sorted(rows, key=lambda row: (-row[0], -row[1]))]


def _date(memory, when):
    Memory.objects.filter(pk=memory.pk).update(created_at=when)


def test_briefing_reads_each_kinds_newest_and_the_recalled_yet_ranks_as_every_row(
    tenancy, owner, team
):
    """More memories of a kind than the briefing fetches: its answer is still the first of all
    the scope's rows, with the ties of rows dated in the future (all of age 0), of rows past the
    decay's bound (all decayed alike) and an old memory lifted by its recalls."""
    words = [
        "amber",
        "basil",
        "cedar",
        "delta",
        "ember",
        "fjord",
        "garnet",
        "harbor",
        "indigo",
        "juniper",
        "kestrel",
        "lumen",
    ]
    facts = remember_all(
        tenancy.owner,
        [
            (f"The {word} service listens on port {8000 + n}.", "fact")
            for n, word in enumerate(words)
        ],
        scope=team,
    )
    future = remember_all(
        tenancy.owner,
        [
            (f"The {word} queue drains every {n + 2} minutes.", "fact")
            for n, word in enumerate(words[:3])
        ],
        scope=team,
    )
    (recalled,) = remember_all(
        tenancy.owner, [("Deploys freeze on the last Friday of a quarter.", "fact")], scope=team
    )
    now = timezone.now()
    for n, memory in enumerate(facts):
        _date(memory, now - timedelta(days=1000 + 10 * n))
    for n, memory in enumerate(future):  # the lowest id the furthest ahead
        _date(memory, now + timedelta(days=4 - n))
    _date(recalled, now - timedelta(days=1200))
    Memory.objects.filter(pk=recalled.pk).update(recall_count=1_000_000)

    personal = remember_all(
        tenancy.owner,
        [
            (f"On the {word} incident the pager rang at {n + 1} am.", "episode")
            for n, word in enumerate(words)
        ]
        + [("The smoke test of the mobile build ran green.", "episode")],
    )
    *capped, fresh = personal
    for n, memory in enumerate(capped):  # 40+ years: past 100 half-lives, the lowest id newest
        _date(memory, datetime(1985 - n, 1, 1, tzinfo=UTC))
    _date(fresh, now - timedelta(days=3))
    personal_scope = Memory.objects.get(pk=fresh.pk).scope.public_id

    for scope in (team, personal_scope):
        result = briefing(actor=owner, max_tokens=500, scopes=[scope])
        shown = row_ids(result, "important")
        assert len(shown) >= 6
        assert shown == _reference_ranking([scope])[: len(shown)]
    both = briefing(actor=owner, max_tokens=500, scopes=[team, personal_scope])
    shown = row_ids(both, "important")
    assert shown == _reference_ranking([team, personal_scope])[: len(shown)]
    assert recalled.public_id in row_ids(
        briefing(actor=owner, max_tokens=500, scopes=[team]), "important"
    )


def test_open_loops_are_the_oldest_of_all_the_scopes_however_many(tenancy, owner, team):
    words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor"]
    in_team = remember_all(
        tenancy.owner,
        [
            (f"Rotate the {word} signing key before {n + 1} May.", "task")
            for n, word in enumerate(words)
        ],
        scope=team,
    )
    personal = remember_all(
        tenancy.owner,
        [
            (f"Which {word} mirror should the CI use for job {n}?", "open_question")
            for n, word in enumerate(words)
        ],
    )
    now = timezone.now()
    for n, memory in enumerate(in_team):
        _date(memory, now - timedelta(days=100 - 2 * n))
    for n, memory in enumerate(personal):
        _date(memory, now - timedelta(days=99 - 2 * n))
    # the same instant as the team's oldest: the larger id after it
    _date(personal[-1], Memory.objects.get(pk=in_team[0].pk).created_at)
    result = briefing(actor=owner, max_tokens=300)
    expected = [
        public_id
        for _, _, public_id in sorted(
            (m.created_at, m.pk, m.public_id)
            for m in Memory.objects.filter(kind__in=["task", "open_question"], valid=True)
        )
    ]
    shown = row_ids(result, "open_loops")
    assert len(shown) >= 3
    assert shown == expected[: len(shown)]


def _rows_read_and_dropped(tenancy, read) -> tuple[object, int]:
    """A scope of 300 chat turns and nothing else (its statistics taken), `read(selection)`,
    and how many rows the statement it sent read only to drop them (its plan, run again)."""
    scope = tenancy.owner.owned_scopes.get(kind="personal")
    for n in range(300):
        stored_memory(scope, f"Chat turn {n}: nothing to do here.", kind="episode")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
        with CaptureQueriesContext(connection) as captured:
            found = read(ScopeSelection(ids=(scope.id,), requested=[]))
        sent = captured.captured_queries[-1]["sql"]
        if "EXECUTE " in sent:  # prepared on the connection: explained by its name
            sent = "EXECUTE " + sent.rsplit("EXECUTE ", 1)[1].strip()
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sent}")
        [plan] = cursor.fetchone()[0]

    def dropped(node: dict) -> int:
        own = node.get("Rows Removed by Filter", 0) * node.get("Actual Loops", 1)
        return own + sum(dropped(child) for child in node.get("Plans", []))

    return found, dropped(plan["Plan"])


def test_open_loops_are_read_without_the_scopes_other_memories(tenancy):
    """A scope of other memories and no open loop (a team that tracks no tasks here): the
    statement looks the loops up by their kinds, not through every memory of the scope in date
    order (which the planner chose when the kinds were not written into the statement)."""
    found, dropped = _rows_read_and_dropped(tenancy, lambda s: loop_rows(s, limit=10))
    assert found["open_loops"] == []
    assert dropped < 20


def test_a_briefings_candidates_are_read_per_kind_not_per_kind_through_every_memory(tenancy):
    """A scope of one kind's memories: the briefing's candidate lists of the catalogue's other
    kinds cost an index probe each, not a walk through every memory of the scope (which the
    planner chose for each kind when the kind was not written into the statement)."""
    found, dropped = _rows_read_and_dropped(tenancy, lambda s: important_rows(s, 20))
    assert len(found) == 20 and {row.kind for row in found} == {"episode"}
    assert dropped < 3 * 300
