"""The approved rules of a set of scopes: the one read every surface delivers them through
(context and briefings, the MCP instructions and `zm://rules`, REST, the export).

Callers pass scope ids they obtained from `scopes.access`; nothing here decides who may read.
"""

from __future__ import annotations

from collections.abc import Iterable

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
