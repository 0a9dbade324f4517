"""The insights page: the seeded figures in its charts and tables, who sees which empty queries,
the one-click forget, and the home page's first section."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from memories.models import Memory
from tests.memories.insights.support import ENGLISH_QUERY, GERMAN_QUERY, seed


@pytest.fixture
def seeded(tenancy, kinds_seeded):
    return seed(tenancy)


def page(user, url):
    client = Client(headers={"Accept-Language": "en"})
    client.force_login(user)
    response = client.get(url)
    return response, response.content.decode()


def test_the_page_shows_the_seeded_figures_in_its_charts_and_tables(tenancy, seeded):
    response, body = page(tenancy.owner, f"/insights/{tenancy.team.public_id}/?days=7")
    assert response.status_code == 200
    assert re.search(r'data-figure="recalls">4<', body)
    assert re.search(r'data-figure="memories_served">5<', body)
    assert re.search(r'data-figure="tokens_served">90<', body)
    assert re.search(r'data-figure="sessions">2<', body)
    # The calls chart: today's stacked bar holds 3 recalls, 1 context and 1 briefing.
    reads = body.split('id="chart-reads-title"')[1].split("</svg>")[0]
    values = sorted(int(v) for v in re.findall(r'class="bar s\d" [^>]*data-value="(\d+)"', reads))
    assert values == [1, 1, 1, 3]
    assert 'data-peak="5"' in body
    # Each chart has its table: today's row of the calls chart.
    assert "<td>3</td><td>1</td><td>1</td>" in body
    assert ENGLISH_QUERY in body and GERMAN_QUERY in body
    assert "Not English (de)" in body
    assert "1200 tokens in 2 calls." in body


def test_a_reader_sees_only_their_own_empty_queries(tenancy, seeded):
    _, body = page(tenancy.reader, f"/insights/{tenancy.team.public_id}/")
    assert GERMAN_QUERY in body and ENGLISH_QUERY not in body
    assert "Only your own queries are shown" in body


def test_an_outsider_gets_404(tenancy, seeded):
    response, _ = page(tenancy.outsider, f"/insights/{tenancy.team.public_id}/")
    assert response.status_code == 404


def test_a_memory_never_recalled_is_forgotten_in_one_click(tenancy, seeded):
    _, body = page(tenancy.owner, f"/insights/{tenancy.team.public_id}/?days=90")
    action = f"/memories/{seeded.old_unused.public_id}/forget/"
    assert f'action="{action}"' in body
    client = Client()
    client.force_login(tenancy.owner)
    client.post(action, {"reason": "Never recalled in 90 days."})
    assert not Memory.objects.get(pk=seeded.old_unused.pk).valid


def test_the_home_page_opens_with_each_scopes_insights(tenancy, seeded):
    _, body = page(tenancy.owner, "/")
    overview = body.split('id="insights-overview"')[1].split("</section>")[0]
    assert f'href="/insights/{tenancy.team.public_id}/"' in overview
    assert "<td>6</td><td>5</td><td>90</td><td>40 %</td>" in overview


def test_the_charts_take_their_colours_from_the_schemes_variables(client):
    css = client.get("/static/css/app.css")
    text = b"".join(css.streaming_content).decode() if css.streaming else css.content.decode()
    assert ".chart .bar.s1, .swatch.s1 { fill: var(--accent)" in text
    assert "@media (prefers-color-scheme: dark)" in text
