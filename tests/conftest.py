from __future__ import annotations

from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient

from scopes.models import Role, Scope
from tests.factories import UserFactory, add_member, make_scope, make_token

pytest_plugins = ["tests.fakes.anthropic_api"]


def pytest_sessionfinish(session, exitstatus):
    # A test run that had to start the embedded database stops it again.
    from zeromemory import embedded_db

    embedded_db.stop_if_started_here()


@dataclass
class Tenancy:
    """An owner with a team scope, a writer and a reader in it, and an outsider."""

    owner: object
    writer: object
    reader: object
    outsider: object
    team: Scope

    def client(self, user, **token_options) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_token(user, **token_options)}")
        return client


@pytest.fixture
def tenancy(db) -> Tenancy:
    owner = UserFactory(username="owner")
    writer = UserFactory(username="writer")
    reader = UserFactory(username="reader")
    outsider = UserFactory(username="outsider")
    team = make_scope(owner=owner, slug="team")
    add_member(team, writer, Role.WRITER)
    add_member(team, reader, Role.READER)
    return Tenancy(owner=owner, writer=writer, reader=reader, outsider=outsider, team=team)


@pytest.fixture
def kinds_seeded(django_db_blocker):
    """Re-seed the kind catalogue (a transactional test's flush empties it)."""
    import importlib

    from django.apps import apps

    from memories import kinds

    seed = importlib.import_module("memories.migrations.0002_seed_kinds").seed
    with django_db_blocker.unblock():
        seed(apps, None)
    kinds._loaded_at = 0.0
    yield
    kinds._loaded_at = 0.0


@pytest.fixture
def sync_tasks(monkeypatch):
    """Queued django-q2 tasks run inline, in the calling thread (django-q2 reads its Conf at
    import time, hence the monkeypatch rather than a settings override)."""
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.fixture
def api(tenancy):
    """api(user, **token_options) -> an APIClient authenticated with a fresh token."""
    return tenancy.client
