from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient

from scopes.models import Role, Scope
from tests.factories import UserFactory, add_member, make_scope, make_token

pytest_plugins = ["tests.fakes.anthropic_api", "tests.databases"]


# A call that starts another process: the harness's (tests/served.py and the support modules)
# and the standard library's. Such a test is `slow` (`-m "not slow"` runs the in-process rest).
_STARTS_A_PROCESS = re.compile(
    r"\b(?:subprocess\.\w+|Popen|Served|start_uvicorn|start_web|start_serve|Worker|Watch"
    r"|stdio_client|run_harness|typescript_sdk_failures|sync_playwright)\("
)


@functools.cache
def _source(function) -> str:
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ""


@functools.cache
def _process_starting_calls(module) -> re.Pattern[str]:
    """The process starts, and the calls of this module's own functions that make one."""
    own = [
        name
        for name, value in vars(module).items()
        if inspect.isfunction(value)
        and value.__module__ == module.__name__
        and _STARTS_A_PROCESS.search(_source(value))
    ]
    if not own:
        return _STARTS_A_PROCESS
    return re.compile(f"{_STARTS_A_PROCESS.pattern}|\\b(?:{'|'.join(own)})\\(")


def _starts_a_process(function) -> bool:
    module = inspect.getmodule(function)
    calls = _process_starting_calls(module) if module is not None else _STARTS_A_PROCESS
    return bool(calls.search(_source(function)))


def pytest_collection_modifyitems(config, items):
    """Mark `slow` every test that starts a process: in its own code (or a function of its
    module that it calls) or in a fixture it uses, however indirectly. Tests that share a
    module-scoped fixture (a served process) stay on one xdist worker (`--dist loadgroup`), so
    it starts once."""
    for item in items:
        if _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
        function = getattr(item, "function", None)
        if function is None or item.get_closest_marker("slow"):
            continue
        fixtures = getattr(item, "_fixtureinfo", None)
        definitions = fixtures.name2fixturedefs.values() if fixtures is not None else ()
        if _starts_a_process(function) or any(
            _starts_a_process(chain[-1].func) for chain in definitions if chain
        ):
            item.add_marker("slow")
    # Longest first: xdist hands tests out in this order, so the modules that start processes go
    # to the workers at once and the in-process tests fill the gaps, instead of a long test
    # starting last and holding up the end of the run. pytest-django has put the tests that use
    # the database before those that flush it (transactional ones); that order is kept, since a
    # flush empties what migrations seeded. Tests without the database may go anywhere.
    slow_modules = {item.module.__name__ for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: _turn(item, slow=item.module.__name__ in slow_modules))


def _turn(item, *, slow: bool) -> int:
    """The test's place in the run: slow tests without the database, then the database tests
    (slow first), then the transactional ones (slow first), then the rest."""
    marker = item.get_closest_marker("django_db")
    fixtures = set(getattr(item, "fixturenames", ()))
    flushes = bool(marker and marker.kwargs.get("transaction")) or bool(
        fixtures & {"transactional_db", "live_server"}
    )
    uses_db = flushes or marker is not None or "db" in fixtures
    if not uses_db:
        return 0 if slow else 5
    return (3 if flushes else 1) + (0 if slow else 1)


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        # An xdist worker leaves the database server to the controller, which loaded the
        # settings (and so started it) before any worker, and ends after the last one.
        return
    from tests.databases import drop_template
    from zeromemory import embedded_db

    drop_template(session.config)
    # A test run that had to start the embedded database stops it again.
    embedded_db.stop_if_started_here()


@pytest.fixture(autouse=True)
def _connections_beside_closed():
    """A write in a transaction of its own looks up near duplicates on a helper thread's
    connection (zeromemory.core.beside), and the activity rows of calls served through the bridge
    go in on their writer's (memories.activity.batched): closed after each test, so that none is
    open when the test database is flushed or dropped."""
    yield
    from memories.activity import batched
    from zeromemory.core import beside

    beside.close_all()
    batched.close()


@pytest.fixture(autouse=True, scope="session")
def _foreground_file_of_this_test_process(tmp_path_factory):
    """Each test process counts its requests in flight in a file of its own: the xdist workers
    share a machine, and one's requests would otherwise make the others' batches and jobs wait
    (zeromemory.core.foreground). A served process has its own, under its data dir."""
    from django.conf import settings

    settings.FOREGROUND_FILE = tmp_path_factory.mktemp("foreground") / "requests"


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


def _shares_a_module_fixture(item) -> bool:
    """Whether the test uses a module- or class-scoped fixture of this suite's own."""
    definitions = getattr(item, "_fixtureinfo", None)
    if definitions is None:
        return False
    for name in item.fixturenames:
        fixture = definitions.name2fixturedefs.get(name, ())
        if fixture and fixture[-1].scope in SHARED_SCOPES and _ours(fixture[-1].func):
            return True
    return False


SHARED_SCOPES = ("module", "class")


def _ours(function) -> bool:
    return function.__module__.startswith("tests.")
