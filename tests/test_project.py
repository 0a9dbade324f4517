"""Project-level surfaces: health, schema, docs, admin, rate limits, the pgvector check."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from scopes.models import ApiToken
from tests.factories import make_token
from tests.statements import as_run
from zeromemory.dbcheck import missing_extensions_message, require_extensions


def test_healthz_answers_when_the_database_answers(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


def test_schema_is_openapi_3_and_lists_the_endpoints(client, db):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    for path in (
        "/api/v1/me",
        "/api/v1/scopes",
        "/api/v1/scopes/{scope_id}/members",
        "/api/v1/tokens",
    ):
        assert path in schema["paths"]
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_docs_page_uses_no_external_cdn(client, db):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger" in html.lower()
    assert "cdn." not in html and "unpkg" not in html


def test_extensions_exist_after_migration(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT extname FROM pg_extension")
        names = {row[0] for row in cursor.fetchall()}
    assert {"vector", "pg_trgm"} <= names
    require_extensions(connection)


def test_missing_pgvector_message_says_what_to_install():
    message = missing_extensions_message(["vector"])
    assert "pgvector" in message and "DATABASE_URL" in message and "apt install" in message


def test_staff_admin_pages(admin_client):
    for url in ("/admin/scopes/scope/", "/admin/scopes/membership/", "/admin/scopes/apitoken/"):
        assert admin_client.get(url).status_code == 200


@override_settings(API_RATE="2/day")  # a daily window: no boundary falls inside the test
def test_rate_limit_answers_rate_limited(tenancy, api):
    client = api(tenancy.owner)
    codes = [client.get("/api/v1/me").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    response = client.get("/api/v1/me")
    assert response.json()["error"]["code"] == "rate_limited"
    assert int(response["Retry-After"]) >= 1


@override_settings(DEBUG=False)
def test_unhandled_error_answers_internal(tenancy, api, monkeypatch):
    def explode(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("scopes.selectors.own_tokens", explode)
    response = api(tenancy.owner).get("/api/v1/tokens")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal"
    assert "boom" not in response.content.decode()


@pytest.mark.parametrize("path", ["/api/v1/me", "/api/v1/scopes", "/api/v1/tokens"])
def test_anonymous_gets_401(client, db, path):
    response = client.get(path)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_schema_generates_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert "/api/v1/memories/batch" in (tmp_path / "schema.yaml").read_text()


@override_settings(API_RATE="2/day")
def test_calls_with_a_revoked_or_expired_token_or_of_an_inactive_user_spend_no_calls(tenancy, api):
    """A bearer's call is counted in the statement that finds its token, and only for an active
    token of an active user: refused calls (401) leave the user's calls as they were."""
    owner = tenancy.owner
    revoked, expired = make_token(owner, name="revoked"), make_token(owner, name="expired")
    ApiToken.objects.filter(name="revoked").update(revoked_at=timezone.now())
    ApiToken.objects.filter(name="expired").update(expires_at=timezone.now() - timedelta(days=1))
    for secret in (revoked, expired):
        refused = APIClient()
        refused.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        assert [refused.get("/api/v1/me").status_code for _ in range(3)] == [401] * 3
    client = api(owner)
    type(owner).objects.filter(pk=owner.pk).update(is_active=False)
    assert [client.get("/api/v1/me").status_code for _ in range(3)] == [401] * 3
    type(owner).objects.filter(pk=owner.pk).update(is_active=True)
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/api/v1/me").status_code == 200
    sent = [as_run(query["sql"]) for query in captured.captured_queries]
    assert [client.get("/api/v1/me").status_code for _ in range(2)] == [200, 429]
    # The token and the count in one statement, not a statement each.
    assert any("zm_rate_window" in sql and "secret_hash" in sql for sql in sent)
    assert not any(sql.lstrip().startswith("INSERT INTO zm_rate_window") for sql in sent)
