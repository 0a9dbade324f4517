"""django-q2 tasks of insights."""

from __future__ import annotations

from memories.insights.fold import insights_fold


def fold() -> int:
    """Every ten minutes: recompute yesterday's and today's daily rows."""
    return insights_fold(days=2)
