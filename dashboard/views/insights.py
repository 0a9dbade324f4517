"""Insights: a scope's value, quality, health and cost over 7, 30 or 90 days, drawn as SVG
charts rendered on the server (each with its table beside it), and the scope list to pick from."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from dashboard.common import actor_for, domain_errors
from memories.insights import answers

CHART_WIDTH, CHART_HEIGHT, GAP = 560, 140, 2


def bar_chart(days: list, series: list[tuple[str, str, str]]) -> dict[str, object]:
    """Stacked bars, one a day: `series` is (attribute, label, css class). Heights are scaled
    to the tallest day; the template draws them and the table beside them."""
    totals = [sum(getattr(day, name) for name, _, _ in series) for day in days]
    peak = max(totals, default=0) or 1
    width = CHART_WIDTH / max(1, len(days))
    bars = []
    for index, day in enumerate(days):
        top = CHART_HEIGHT
        parts = []
        for name, label, css in series:
            value = getattr(day, name)
            height = CHART_HEIGHT * value / peak
            top -= height
            parts.append({"y": round(top, 2), "h": round(height, 2), "css": css, "label": label,
                          "value": value})  # fmt: skip
        bars.append({"x": round(index * width, 2), "w": round(max(1.0, width - GAP), 2),
                     "day": day.day, "parts": parts, "total": totals[index]})  # fmt: skip
    return {
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "bars": bars,
        "peak": max(totals, default=0),
        "series": [{"label": label, "css": css} for _, label, css in series],
    }


@login_required
@domain_errors
def insights(request: HttpRequest, scope_id: str) -> HttpResponse:
    asked = request.GET.get("days", "")
    days = int(asked) if asked in {str(period) for period in answers.PERIODS} else 30
    answer = answers.scope_insights(actor=actor_for(request), scope_id=scope_id, days=days)
    reads = bar_chart(
        answer.daily,
        [("recalls", _("Recalls"), "s1"), ("contexts", _("Contexts"), "s2"),
         ("briefings", _("Briefings"), "s3")],
    )  # fmt: skip
    served = bar_chart(answer.daily, [("memories_served", _("Memories handed out"), "s1")])
    costs = [
        {"path": path, "chart": bar_chart(path.days, [("tokens", _("Tokens"), "s2")])}
        for path in answer.cost
    ]
    context = {
        "answer": answer,
        "periods": answers.PERIODS,
        "reads_chart": reads,
        "served_chart": served,
        "costs": costs,
    }
    return render(request, "dashboard/insights.html", context)


@login_required
def insights_list(request: HttpRequest) -> HttpResponse:
    overview = answers.insights_overview(actor=actor_for(request))
    return render(request, "dashboard/insights_list.html", {"overview": overview})
