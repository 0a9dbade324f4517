"""Fixtures of the watcher's tests: a home folder with a git project in it, the live test
server behind a gate, and the watcher run as the real program (`python3 watcher/zm_watch.py`)
with its state, its configuration and its transcripts under the test's folders."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.conf import settings

from memories.embeddings import embed_query
from tests.factories import UserFactory, make_token
from tests.watcher.gate import Gate
from tests.watcher.support import Home, Watch

WATCHER = Path(settings.BASE_DIR) / "watcher"
if str(WATCHER) not in sys.path:  # the watcher's package, importable as it is installed
    sys.path.insert(0, str(WATCHER))


@pytest.fixture
def home(tmp_path) -> Home:
    return Home.make(tmp_path)


@pytest.fixture
def seeded_live_server(live_server, transactional_db, kinds_seeded):
    """The live test server, in this process, on the test database (the model loaded before
    its first request, as the served app does)."""
    embed_query("warm up")
    return live_server


@pytest.fixture
def token(seeded_live_server) -> str:
    return make_token(UserFactory(username="dev"))


@pytest.fixture
def gate(seeded_live_server):
    opened = Gate(seeded_live_server.url).open()
    yield opened
    opened.shut()


@pytest.fixture
def watch(home, gate, token, tmp_path):
    """watch(**config) -> the watcher, configured for the gate's URL and the token."""
    started: list[Watch] = []

    def make(**config) -> Watch:
        watcher = Watch(home=home, url=gate.url, token=token, log=tmp_path / "watch.log", **config)
        started.append(watcher)
        return watcher

    yield make
    for watcher in started:
        watcher.stop()
