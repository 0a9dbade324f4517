"""The insights page in a real browser: in English on the light scheme and in Japanese on the
dark one, its charts drawn from the seeded figures; the screenshots are kept as test artefacts
(test-artifacts/)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.memories.insights.support import GERMAN_QUERY, seed

pytestmark = pytest.mark.django_db(transaction=True)


def bar_values(page, chart: str) -> list[int]:
    rects = page.locator(f"svg[aria-labelledby='{chart}-title'] rect.bar")
    return sorted(int(value) for value in rects.evaluate_all("rs => rs.map(r => r.dataset.value)"))


@pytest.mark.parametrize(
    ("lang", "scheme", "heading", "recalls"),
    [("en", "light", "Insights: Team", "Recalls"), ("ja", "dark", "インサイト: Team", "リコール")],
)
def test_the_insights_page_draws_the_seeded_figures(
    session, tenancy, lang, scheme, heading, recalls
):
    seed(tenancy)
    page = session.page(tenancy.owner, lang=lang, color_scheme=scheme)
    page.goto(f"/insights/{tenancy.team.public_id}/?days=7")
    expect(page.get_by_role("heading", level=1)).to_have_text(heading)
    expect(page.locator("html")).to_have_attribute("lang", lang)
    figure = page.locator("dl.figures div", has_text=recalls).first
    expect(figure.locator("dd")).to_have_text("4")
    # Today's bar: three recalls, a context and a briefing; three days ago: one recall.
    assert bar_values(page, "chart-reads") == [1, 1, 1, 3]
    assert bar_values(page, "chart-served") == [1, 4]
    assert bar_values(page, "judge") == [1200]
    tallest = page.locator("svg[aria-labelledby='chart-reads-title'] rect.bar").first
    box = tallest.bounding_box()
    assert box is not None and box["height"] > 0
    # The bars take the scheme's accent colour: not the page's background.
    fill = tallest.evaluate("r => getComputedStyle(r).fill")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert fill and fill != background
    expect(page.get_by_text(GERMAN_QUERY)).to_be_visible()
    session.screenshot(page, f"insights-{lang}-{scheme}")
