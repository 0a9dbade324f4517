"""The insights answers, read from the daily rows (never from the activity log as a whole) and
from the queues' own indexes: a scope's figures over 7, 30 or 90 days (quality in
`memories.insights.quality`, health and cost in `memories.insights.queues`), and each readable
scope's headline for the home page.

Who sees what goes through the access module: a scope's figures to whoever may read the scope
(a token restricted to scopes only for its scopes); the queries that found nothing, to the
scope's admins acting as themselves (a session or a full token) all of them, to other members
and other credentials only their own.
"""

from __future__ import annotations

import json
from datetime import UTC, date, timedelta

from django.db import connection
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.insights.quality import scope_quality
from memories.insights.queues import scope_cost, scope_health
from memories.insights.schemas import DayOut, InsightsOut, ValueOut, WrittenOut
from memories.models import DailyFigures, DailyVisitor
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed

PERIODS = (7, 30, 90)
_SUMMED = (
    "recalls",
    "contexts",
    "briefings",
    "empty_reads",
    "memories_served",
    "tokens_served",
    "written_human",
    "written_agent",
    "written_capture",
    "chunks",
    "chunks_kept",
)
_DAILY = f"""
SELECT day, chunks_dropped::text, {", ".join(_SUMMED)} FROM memories_dailyfigures
WHERE scope_id = %(scope)s AND day >= %(since)s AND day <= %(until)s
"""  # noqa: S608 (the columns are this module's own names)
_NO_ROW = dict.fromkeys(_SUMMED, 0)  # a day without a row counted nothing
# One row per session or client: the last day the scope served it (kept by the fold).
_VISITORS = """
SELECT kind, count(*) FROM memories_lastvisit
WHERE scope_id = %(scope)s AND day >= %(since)s GROUP BY kind
"""


def validate_days(days: object) -> int:
    if isinstance(days, str) and days.isdigit():
        days = int(days)
    if isinstance(days, bool) or days not in PERIODS:
        raise ValidationFailed("days", _("days must be 7, 30 or 90."))
    return days  # type: ignore[return-value]


def _today() -> date:
    return timezone.now().astimezone(UTC).date()


def scope_insights(*, actor: Actor, scope_id: str, days: object = 30) -> InsightsOut:
    """A scope's figures over the last `days` UTC days, today included."""
    days = validate_days(days)
    try:
        scope = access.readable_scope_with_role(actor, scope_id)
    except NotFound as exc:
        raise exc.naming("scope") from None
    until = _today()
    since = until - timedelta(days=days - 1)
    params = {"scope": scope.pk, "since": since, "until": until}
    with connection.cursor() as cursor:
        # At most one row a day: read them once, and sum them here rather than in more queries.
        cursor.execute(_DAILY, params)
        rows = [
            dict(zip(_SUMMED, figures, strict=True), day=day, chunks_dropped=json.loads(dropped))
            for day, dropped, *figures in cursor.fetchall()
        ]
        cursor.execute(_VISITORS, params)
        visitors = dict(cursor.fetchall())
    totals = {name: sum(row[name] for row in rows) for name in _SUMMED}
    return InsightsOut(
        scope=scope.public_id,
        scope_name=scope.name,
        personal=scope.is_personal,
        days=days,
        since=since,
        until=until,
        value=_value(totals, visitors),
        daily=_daily(rows, since, days),
        quality=scope_quality(
            actor=actor, scope=scope, role=scope.my_role, since=since, totals=totals
        ),
        health=scope_health(scope=scope, rows=rows),
        cost=scope_cost(scope=scope, since=since, days=days),
    )


def _value(totals: dict[str, int], visitors: dict[str, int]) -> ValueOut:
    return ValueOut(
        recalls=totals["recalls"],
        contexts=totals["contexts"],
        briefings=totals["briefings"],
        memories_served=totals["memories_served"],
        tokens_served=totals["tokens_served"],
        sessions=visitors.get(DailyVisitor.SESSION, 0),
        clients=visitors.get(DailyVisitor.CLIENT, 0),
        written=WrittenOut(
            human=totals["written_human"],
            agent=totals["written_agent"],
            capture=totals["written_capture"],
        ),
    )


def _daily(rows: list[dict], since: date, days: int) -> list[DayOut]:
    by_day = {row["day"]: row for row in rows}
    out = []
    for offset in range(days):
        day = since + timedelta(days=offset)
        row = by_day.get(day, _NO_ROW)
        out.append(
            DayOut(
                day=day,
                recalls=row["recalls"],
                contexts=row["contexts"],
                briefings=row["briefings"],
                empty_reads=row["empty_reads"],
                memories_served=row["memories_served"],
                tokens_served=row["tokens_served"],
                written=row["written_human"] + row["written_agent"] + row["written_capture"],
            )
        )
    return out


def insights_overview(*, actor: Actor, days: int = 7) -> list[dict[str, object]]:
    """Each readable scope's headline figures of the last `days` days, in one query: the home
    page's first section."""
    since = _today() - timedelta(days=days - 1)
    scopes = list(access.readable_scopes(actor).order_by("name"))
    figures = {
        row["scope_id"]: row
        for row in DailyFigures.objects.filter(scope__in=scopes, day__gte=since)
        .values("scope_id")
        .annotate(
            recalls=Sum("recalls"),
            contexts=Sum("contexts"),
            briefings=Sum("briefings"),
            empty_reads=Sum("empty_reads"),
            memories_served=Sum("memories_served"),
            tokens_served=Sum("tokens_served"),
        )
    }
    out = []
    for scope in scopes:
        row = figures.get(scope.pk, {})
        reads = (row.get("recalls") or 0) + (row.get("contexts") or 0)
        out.append(
            {
                "scope": scope,
                "reads": reads + (row.get("briefings") or 0),
                "memories_served": row.get("memories_served") or 0,
                "tokens_served": row.get("tokens_served") or 0,
                "empty_rate": (row.get("empty_reads") or 0) / reads if reads else 0.0,
            }
        )
    return out
