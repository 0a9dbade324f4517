"""The LLM spend ledger: tokens spent per path, scope and UTC day, and the daily budgets that read
it. A path whose scope spent its day's budget defers its work to the next UTC day (the row stays
queued, due again at midnight) rather than dropping it."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memories.models import LlmPath, LlmSpend

# The setting that holds each per-scope budget; 0 means no budget. Extraction's budget is the
# user's (ZM_EXTRACTION_DAILY_TOKENS, read from the chunks); its spend is recorded here too.
BUDGET_SETTINGS = {
    LlmPath.TRANSLATION: "TRANSLATION_DAILY_TOKENS",
    LlmPath.EXTRACTION: "EXTRACTION_DAILY_TOKENS",
    LlmPath.JUDGE: "HYGIENE_DAILY_TOKENS",
}

_RECORD_SQL = """
INSERT INTO memories_llmspend (day, path, scope_id, tokens, calls)
VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (scope_id, path, day)
DO UPDATE SET tokens = memories_llmspend.tokens + EXCLUDED.tokens,
              calls = memories_llmspend.calls + EXCLUDED.calls
"""


def today() -> date:
    return timezone.now().astimezone(UTC).date()


def next_utc_day() -> datetime:
    return datetime.combine(today() + timedelta(days=1), time.min, tzinfo=UTC)


def spend_record(*, path: str, scope_id: int, tokens: int, calls: int = 1) -> None:
    """Add one call's tokens to the day's row (one statement, safe under concurrent workers)."""
    with connection.cursor() as cursor:
        cursor.execute(_RECORD_SQL, [today(), path, scope_id, max(0, tokens), calls])


def spent_today(*, path: str, scope_id: int) -> int:
    row = LlmSpend.objects.filter(path=path, scope_id=scope_id, day=today()).first()
    return row.tokens if row is not None else 0


def budget_of(path: str) -> int:
    return int(getattr(settings, BUDGET_SETTINGS[path]))


def over_budget(*, path: str, scope_id: int) -> bool:
    """Whether the scope spent its day's budget on this path (never, without a budget)."""
    budget = budget_of(path)
    return bool(budget) and spent_today(path=path, scope_id=scope_id) >= budget
