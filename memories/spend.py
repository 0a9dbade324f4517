"""The LLM spend ledger: tokens spent per path, scope and UTC day (and per user, for a path
budgeted per user), and the daily budgets that read it. These are the rows the insights report;
every budget counts them, per scope or per user. A path whose scope (or user) spent its day's
budget defers its work to the next UTC day (the row stays queued, due again at midnight) rather
than dropping it."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Sum
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils import timezone

from memories.jobs import JobSettings, jobs_registered
from memories.models import LlmSpend
from scopes.signals import account_erasing

# NULLs are never equal in a unique index, so the rows with a user and those without have one
# partial index each, and the statement names the one it adds to.
_ADD = """
DO UPDATE SET tokens = memories_llmspend.tokens + EXCLUDED.tokens,
              calls = memories_llmspend.calls + EXCLUDED.calls
"""
_RECORD_SCOPE_SQL = (
    """
INSERT INTO memories_llmspend (day, path, scope_id, user_id, tokens, calls)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (scope_id, path, day) WHERE user_id IS NULL"""
    + _ADD
)
_RECORD_USER_SQL = (
    """
INSERT INTO memories_llmspend (day, path, scope_id, user_id, tokens, calls)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (scope_id, path, day, user_id) WHERE user_id IS NOT NULL"""
    + _ADD
)


def today() -> date:
    return timezone.now().astimezone(UTC).date()


def next_utc_day() -> datetime:
    return datetime.combine(today() + timedelta(days=1), time.min, tzinfo=UTC)


def spend_record(
    *, path: str, scope_id: int, tokens: int, calls: int = 1, user_id: int | None = None
) -> None:
    """Add one call's tokens to the day's row (one statement, safe under concurrent workers);
    a path budgeted per user records whose work it was."""
    sql = _RECORD_USER_SQL if user_id is not None else _RECORD_SCOPE_SQL
    with connection.cursor() as cursor:
        cursor.execute(sql, [today(), path, scope_id, user_id, max(0, tokens), calls])


def spent_today(*, path: str, scope_id: int | None = None, user_id: int | None = None) -> int:
    """Tokens the path spent today: in a scope (every user's rows), or by a user (in every
    scope)."""
    rows = LlmSpend.objects.filter(path=path, day=today())
    if scope_id is not None:
        rows = rows.filter(scope_id=scope_id)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    return rows.aggregate(total=Sum("tokens"))["total"] or 0


def _declared(path: str) -> JobSettings:
    """The settings of the job whose spend rows have this path: its budget is declared there."""
    for job in jobs_registered():
        if job.spend_path == path:
            return job.settings
    raise KeyError(path)


def budget_of(path: str) -> int:
    """Tokens a day the path may spend (ZM_<prefix>_DAILY_TOKENS); 0 means no budget."""
    return int(getattr(settings, f"{_declared(path).prefix}_DAILY_TOKENS"))


def budget_per(path: str) -> str:
    """ "scope" or "user": whose day the budget is."""
    return _declared(path).budget_per


def over_budget(*, path: str, scope_id: int, user_id: int | None = None) -> bool:
    """Whether the path spent its day's budget (never, without a budget): the scope's, or the
    user's for a path budgeted per user."""
    budget = budget_of(path)
    if not budget:
        return False
    if budget_per(path) == "user":
        return spent_today(path=path, user_id=user_id) >= budget
    return spent_today(path=path, scope_id=scope_id) >= budget


_FOLD_SQL = (
    """
INSERT INTO memories_llmspend (day, path, scope_id, user_id, tokens, calls)
SELECT day, path, scope_id, NULL, sum(tokens), sum(calls)
FROM memories_llmspend WHERE user_id = %s GROUP BY day, path, scope_id
ON CONFLICT (scope_id, path, day) WHERE user_id IS NULL"""
    + _ADD
)


@receiver(account_erasing, dispatch_uid="memories_spend_user_forget")
@receiver(pre_delete, sender=settings.AUTH_USER_MODEL, dispatch_uid="memories_spend_user_deleted")
def spend_user_forget(sender, **kwargs) -> None:
    """The spend of an erased account, or of a user deleted any other way (the admin), stays in
    its scopes' figures, no longer naming it."""
    user = kwargs.get("user") or kwargs["instance"]
    with connection.cursor() as cursor:
        cursor.execute(_FOLD_SQL, [user.pk])
    LlmSpend.objects.filter(user_id=user.pk).delete()
