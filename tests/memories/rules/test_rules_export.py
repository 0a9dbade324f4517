"""`manage.py rules_export`: a scope's approved rules, in order, in each tool's file format."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memories.models import Rule, RuleStatus
from tests.factories import UserFactory, make_scope
from tests.memories.recall_support import remember_all

pytestmark = pytest.mark.usefixtures("kinds_seeded")


@pytest.fixture
def team(db):
    owner = UserFactory(username="owner")
    team = make_scope(owner=owner, slug="billing")
    first, second, candidate = remember_all(
        owner,
        [
            ("Two people review every billing migration.", "convention"),
            ("Never deploy billing on Fridays.", "gotcha"),
            ("Invoices are kept ten years.", "decision"),
        ],
        scope=team.public_id,
    )
    for position, memory in ((2, first), (1, second)):
        Rule.objects.create(
            scope=team,
            memory=memory,
            text=memory.content,
            status=RuleStatus.APPROVED,
            position=position,
        )
    Rule.objects.create(scope=team, memory=candidate, text=candidate.content)
    return team


def export(team, fmt, **options) -> str:
    out = StringIO()
    call_command("rules_export", scope=team.public_id, format=fmt, stdout=out, **options)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["claude-md", "agents-md", "cursor-mdc"])
def test_each_format_lists_the_approved_rules_in_order(team, fmt):
    text = export(team, fmt)
    items = [line for line in text.splitlines() if line.startswith("- ")]
    assert items == [
        "- Never deploy billing on Fridays.",
        "- Two people review every billing migration.",
    ]
    assert "Invoices" not in text  # a candidate is not a rule yet


def test_the_cursor_rule_is_always_applied(team):
    text = export(team, "cursor-mdc")
    front = text.split("---")[1]
    assert "alwaysApply: true" in front and "description:" in front


def test_a_file_and_an_unknown_scope(team, tmp_path):
    target = tmp_path / "CLAUDE.md"
    export(team, "claude-md", output=str(target))
    assert target.read_text().startswith("## Team rules")
    with pytest.raises(CommandError):
        call_command("rules_export", scope="scp_nope", format="claude-md")
