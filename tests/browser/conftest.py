"""Browser tests: Playwright for Python drives Debian's chromium against the live test server.

The live server runs in a thread of this process on the test database; every test is
transactional, so the kind catalogue is seeded again for each. Playwright's sync API keeps an
event loop in the main thread while the browser is open, and Django refuses ORM calls from a
thread with a running loop; DJANGO_ALLOW_ASYNC_UNSAFE is set only while this package's browser
is open. A machine without chromium fails these tests: it never skips them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from memories.embeddings import embed_query

CHROMIUM = Path(os.environ.get("ZM_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
TIMEOUT_MS = 15_000


@pytest.fixture(scope="package")
def browser() -> Iterator:
    if not CHROMIUM.exists():
        pytest.fail(
            f"chromium is missing at {CHROMIUM}: install Debian's chromium "
            "(`make test` installs it, or prints the command to run) to run the browser tests."
        )
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            )
            yield launched
            launched.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def seeded_live_server(live_server, kinds_seeded, transactional_db):
    # The served app loads the model before its first request (zeromemory/asgi.py); so does the
    # live server, or a page's first write waits for the load under a browser's timeout.
    embed_query("warm up")
    return live_server


class Session:
    """Opens pages for a user in a fresh browser context and saves screenshots."""

    def __init__(self, browser, base_url: str, request: pytest.FixtureRequest) -> None:
        self.browser = browser
        self.base_url = base_url
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
        self.contexts: list = []
        self.shots = 0

    def page(
        self, user=None, *, lang: str = "en", color_scheme: str = "light", accept: bool = True
    ):
        """A page (signed in as `user`); with `accept`, every dialog it opens is accepted."""
        context = self.browser.new_context(
            base_url=self.base_url,
            locale=lang,
            extra_http_headers={"Accept-Language": lang},
            color_scheme=color_scheme,
            viewport={"width": 1200, "height": 900},
        )
        context.set_default_timeout(TIMEOUT_MS)
        self.contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            cookie = client.cookies[settings.SESSION_COOKIE_NAME]
            context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": self.base_url}])
        page = context.new_page()
        if accept:
            page.on("dialog", lambda dialog: dialog.accept())
        return page

    def screenshot(self, page, label: str = "") -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        self.shots += 1
        suffix = f"-{label}" if label else ""
        path = ARTIFACTS / f"browser-{self.name}-{self.shots:02d}{suffix}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def session(browser, seeded_live_server, request) -> Iterator[Session]:
    opened = Session(browser, seeded_live_server.url, request)
    yield opened
    opened.close()
