"""The insights answers, read from the daily rows (never from the activity log as a whole) and
from the queues' own indexes: a scope's figures over 7, 30 or 90 days (health and cost in
`memories.insights.queues`), and each readable scope's headline for the home page.

Who sees what goes through the access module: a scope's figures to whoever may read the scope
(a token restricted to scopes only for its scopes); the queries that found nothing, to the
scope's admins all of them, to other members only their own.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from django.db import connection
from django.db.models import Count, Q, Sum, Window
from django.utils import timezone
from django.utils.translation import gettext as _

from memories.insights.queues import scope_cost, scope_health
from memories.insights.schemas import (
    DayOut,
    EmptyQueryOut,
    InsightsOut,
    MemoryLineOut,
    QualityOut,
    ValueOut,
    WrittenOut,
)
from memories.models import (
    Conflict,
    ConflictStatus,
    DailyFigures,
    DailyRecalled,
    DailyVisitor,
    EmptyRead,
    Memory,
)
from scopes import access
from scopes.models import Role, Scope
from zeromemory.core.actor import Actor
from zeromemory.core.errors import NotFound, ValidationFailed

PERIODS = (7, 30, 90)
NEVER_RECALLED_DAYS = 90
LIST_LENGTH = 10
_VISITORS = """
SELECT kind, count(*) FROM (
    SELECT kind, key FROM memories_dailyvisitor
    WHERE scope_id = %(scope)s AND day >= %(since)s GROUP BY kind, key
) visitors GROUP BY kind
"""
_MOST_RECALLED = """
SELECT m.public_id, m.kind_id, m.content, top.times
FROM (
    SELECT memory_id, sum(times) AS times FROM memories_dailyrecalled
    WHERE scope_id = %(scope)s AND day >= %(since)s
    GROUP BY memory_id ORDER BY times DESC, memory_id LIMIT %(length)s
) top
JOIN memories_memory m ON m.id = top.memory_id AND m.valid
ORDER BY top.times DESC, top.memory_id
"""
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
        scope = access.readable_scope(actor, scope_id)
    except NotFound as exc:
        raise exc.naming("scope") from None
    until = _today()
    since = until - timedelta(days=days - 1)
    # At most one row a day: read them once, and sum them here rather than in more queries.
    rows = list(
        DailyFigures.objects.filter(scope=scope, day__gte=since, day__lte=until).only(
            "day", "chunks_dropped", *_SUMMED
        )
    )
    totals = {name: sum(getattr(row, name) for row in rows) for name in _SUMMED}
    return InsightsOut(
        scope=scope.public_id,
        scope_name=scope.name,
        personal=scope.is_personal,
        days=days,
        since=since,
        until=until,
        value=_value(scope, since, totals),
        daily=_daily(rows, since, days),
        quality=_quality(actor, scope, since, totals),
        health=scope_health(scope=scope, rows=rows),
        cost=scope_cost(scope=scope, since=since, days=days),
    )


def _value(scope: Scope, since: date, totals: dict[str, int]) -> ValueOut:
    # Distinct keys by hashing (a GROUP BY kind, key) rather than COUNT(DISTINCT), which sorts
    # every row of the period by its text: several times faster at 90 days.
    with connection.cursor() as cursor:
        cursor.execute(_VISITORS, {"scope": scope.pk, "since": since})
        visitors = dict(cursor.fetchall())
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


def _daily(rows, since: date, days: int) -> list[DayOut]:
    by_day = {row.day: row for row in rows}
    out = []
    for offset in range(days):
        day = since + timedelta(days=offset)
        row = by_day.get(day) or DailyFigures(day=day)
        out.append(
            DayOut(
                day=day,
                recalls=row.recalls,
                contexts=row.contexts,
                briefings=row.briefings,
                empty_reads=row.empty_reads,
                memories_served=row.memories_served,
                tokens_served=row.tokens_served,
                written=row.written_human + row.written_agent + row.written_capture,
            )
        )
    return out


def _counted_sample(memories) -> tuple[int, list[MemoryLineOut]]:
    """How many `memories` there are and the first of them, in one query (a window count)."""
    rows = list(
        memories.annotate(total=Window(Count("id"))).values_list(
            "public_id", "kind_id", "content", "total"
        )[:LIST_LENGTH]
    )
    lines = [MemoryLineOut(id=pk, kind=kind, content=content) for pk, kind, content, _ in rows]
    return (rows[0][3] if rows else 0), lines


def _quality(actor: Actor, scope: Scope, since: date, totals: dict[str, int]) -> QualityOut:
    role = access.role_in(actor, scope)
    is_admin = role is not None and role >= Role.ADMIN
    start = datetime.combine(since, time.min, tzinfo=UTC)
    empty = EmptyRead.objects.filter(scope=scope, created_at__gte=start)
    if not is_admin:
        empty = empty.filter(user=actor.user)
    empty_rows = empty.select_related("user").order_by("-created_at")[:LIST_LENGTH]

    # The top of the period in SQL, joined to its memories in the same statement.
    with connection.cursor() as cursor:
        cursor.execute(_MOST_RECALLED, {"scope": scope.pk, "since": since, "length": LIST_LENGTH})
        most = [
            MemoryLineOut(id=public_id, kind=kind, content=content, times=times)
            for public_id, kind, content, times in cursor.fetchall()
        ]

    cutoff = timezone.now() - timedelta(days=NEVER_RECALLED_DAYS)
    recent = DailyRecalled.objects.filter(
        scope=scope, day__gte=_today() - timedelta(days=NEVER_RECALLED_DAYS - 1)
    ).values("memory_id")
    never = Memory.objects.filter(scope=scope, valid=True, created_at__lt=cutoff).exclude(
        pk__in=recent
    )
    never_count, never_sample = _counted_sample(never.order_by("created_at"))

    open_items = Conflict.objects.filter(scope=scope, status=ConflictStatus.OPEN)
    disputed = Memory.objects.filter(valid=True).filter(
        Q(pk__in=open_items.values("memory_a_id")) | Q(pk__in=open_items.values("memory_b_id"))
    )
    disputed_count, disputed_sample = _counted_sample(disputed.order_by("-id"))

    reads = totals["recalls"] + totals["contexts"]
    return QualityOut(
        reads=reads,
        empty_reads=totals["empty_reads"],
        empty_rate=round(totals["empty_reads"] / reads, 4) if reads else 0.0,
        empty_queries=[
            EmptyQueryOut(
                query=row.query,
                operation=row.operation,
                at=row.created_at,
                by=row.user.get_username(),
                not_english=bool(row.query_lang),
                lang=row.query_lang,
            )
            for row in empty_rows
        ],
        empty_queries_of_others_hidden=not is_admin,
        most_recalled=most,
        never_recalled=never_count,
        never_recalled_sample=never_sample,
        disputed=disputed_count,
        disputed_sample=disputed_sample,
    )


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
