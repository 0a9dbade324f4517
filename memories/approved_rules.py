"""The approved rules of a set of scopes: the one read every surface delivers them through
(context and briefings, the MCP instructions and `zm://rules`, REST, the export).

Callers pass scope ids they obtained from `scopes.access`; nothing here decides who may read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from django.db import connections, router

from memories.models import Rule, RuleStatus


def approved_rules(scope_ids: Iterable[int]) -> list[Rule]:
    """Approved rules of valid memories in these scopes, each scope's in its admins' order."""
    return list(
        Rule.objects.filter(
            scope_id__in=list(scope_ids), status=RuleStatus.APPROVED, memory__valid=True
        )
        .select_related("scope", "memory")
        .order_by("scope__name", "scope_id", "position", "id")
    )


class RuleLine(NamedTuple):
    """What a context or briefing shows of an approved rule."""

    memory_pk: int
    memory_id: str
    scope_id: str
    text: str


# `approved_rules`' selection and order, reading only what a context shows: every build_context
# and briefing runs it while the model embeds the topic, and loading each rule's memory (its
# vector included) and scope through the ORM cost that window twice the statement's time.
_RULE_LINES = """
SELECT r.memory_id, m.public_id, s.public_id, r.text
FROM memories_rule r
JOIN memories_memory m ON m.id = r.memory_id
JOIN scopes_scope s ON s.id = r.scope_id
WHERE r.scope_id = ANY(%s) AND r.status = %s AND m.valid
ORDER BY s.name, r.scope_id, r.position, r.id
"""


def approved_rule_lines(scope_ids: Iterable[int]) -> list[RuleLine]:
    """The rows of `approved_rules(scope_ids)`, as the lines a context shows, in one statement."""
    with connections[router.db_for_read(Rule)].cursor() as cursor:
        cursor.execute(_RULE_LINES, [list(scope_ids), RuleStatus.APPROVED.value])
        return [RuleLine(*row) for row in cursor.fetchall()]
