"""django-q2 tasks of the activity log, at the path its schedules name. Each calls a service.

Canonicalization's tasks are in `memories.canonical.tasks`.
"""

from __future__ import annotations

from memories.activity import log as activity


def prune_activity() -> int:
    """Daily (a django-q2 schedule): drop activity rows older than the retention setting."""
    return activity.activity_prune()


def fold_recall_counts() -> int:
    """Every minute (a django-q2 schedule): add recent recalls to the memories' recall_count."""
    return activity.fold_recall_counts()
