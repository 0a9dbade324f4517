"""API tokens (the secret shown once, revoke, tenancy) and the activity page."""

from __future__ import annotations

import re
from datetime import date, timedelta

from memories.models import ActivityLog
from memories.search import recall
from scopes.models import ApiToken
from scopes.services import hash_token_secret, token_create
from tests.dashboard.conftest import HTMX
from zeromemory.core.actor import Actor


def test_create_shows_the_secret_once(tenancy, login):
    client = login(tenancy.owner)
    response = client.post(
        "/tokens/",
        {"name": "ci agent", "read_only": "on", "scopes": [tenancy.team.public_id]},
    )
    assert response.status_code == 200
    secret = re.search(r'id="token-secret">(zm_[^<]+)<', response.content.decode()).group(1)
    token = ApiToken.objects.get(user=tenancy.owner)
    assert token.secret_hash == hash_token_secret(secret)
    assert token.read_only and token.scope_restricted
    assert list(token.restricted_scopes.all()) == [tenancy.team]
    assert response["Cache-Control"].startswith("max-age=0")
    later = client.get("/tokens/").content.decode()
    assert secret not in later and "ci agent" in later


def test_create_through_htmx_answers_the_tokens_partial(tenancy, login):
    response = login(tenancy.owner).post("/tokens/", {"name": "x"}, headers=HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="tokens">') and 'id="token-secret"' in body


def test_create_errors_in_the_users_language(tenancy, login):
    client = login(tenancy.owner, "de")
    response = client.post("/tokens/", {"name": ""})
    assert response.status_code == 422
    assert "Dieses Feld ist zwingend erforderlich." in response.content.decode()
    past = (date.today() - timedelta(days=2)).isoformat()
    response = client.post("/tokens/", {"name": "old", "expires_at": past})
    assert response.status_code == 422
    assert "Das Ablaufdatum muss in der Zukunft liegen." in response.content.decode()
    foreign = client.post("/tokens/", {"name": "x", "scopes": ["scp_notmine"]})
    assert foreign.status_code == 422
    assert not ApiToken.objects.exists()


def test_revoke(tenancy, login):
    issued = token_create(actor=Actor(user=tenancy.owner), name="laptop")
    client = login(tenancy.owner)
    response = client.post(f"/tokens/{issued.token.public_id}/revoke/", headers=HTMX)
    assert response.status_code == 200 and "Revoked" in response.content.decode()
    issued.token.refresh_from_db()
    assert issued.token.revoked_at is not None


def test_a_foreign_token_answers_404(tenancy, login):
    issued = token_create(actor=Actor(user=tenancy.owner), name="laptop")
    client = login(tenancy.outsider)
    assert client.post(f"/tokens/{issued.token.public_id}/revoke/").status_code == 404
    assert client.post("/tokens/tok_missing/revoke/").status_code == 404
    assert issued.token.public_id not in client.get("/tokens/").content.decode()
    issued.token.refresh_from_db()
    assert issued.token.revoked_at is None


def test_activity_shows_my_own_calls_with_the_exact_query(tenancy, login):
    query = "  ¿dónde  está el despliegue?\t"
    recall(actor=Actor(user=tenancy.reader, surface="api"), query=query)
    recall(actor=Actor(user=tenancy.outsider), query="outsider question")
    body = login(tenancy.reader).get("/activity/").content.decode()
    assert f'<code class="query">{query}</code>' in body
    assert "outsider question" not in body
    assert ActivityLog.objects.filter(user=tenancy.reader).count() == 1


def test_activity_filters(tenancy, login):
    recall(actor=Actor(user=tenancy.owner), query="nothing matches this")
    client = login(tenancy.owner)
    assert "nothing matches this" in client.get("/activity/", {"outcome": "empty"}).content.decode()
    assert (
        "nothing matches this" not in client.get("/activity/", {"outcome": "hit"}).content.decode()
    )
    assert "nothing matches this" in client.get("/activity/", {"surface": "api"}).content.decode()
    partial = client.get("/activity/", {"operation": "recall"}, headers=HTMX).content.decode()
    assert partial.lstrip().startswith('<section id="activity-results"')
    assert client.get("/activity/", {"outcome": "bogus"}).status_code == 400
