"""The HTTP edges of the real web process (`python -m zeromemory.web`, what `make run` starts):
a client on the same host cannot pose as another address with X-Forwarded-For, and a chunked
request body (no Content-Length) is read like any other."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import httpx2
import pytest

from tests.factories import make_token
from tests.helpers import child_env
from tests.memories.mcp_support import BASE_DIR, free_port, stop

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def web(django_db_setup, django_db_blocker):
    port = free_port()
    with django_db_blocker.unblock():
        proc = subprocess.Popen(
            [sys.executable, "-m", "zeromemory.web", "--port", str(port)],
            cwd=BASE_DIR,
            env=child_env(ZM_LOGIN_FAILURE_LIMIT="3", ZM_API_RATE=""),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2):  # noqa: S310
                break
        except (OSError, urllib.error.URLError):
            time.sleep(0.2)
    yield base
    stop(proc)


def sign_in(base: str, username: str, password: str, forwarded_for: str) -> httpx2.Response:
    with httpx2.Client(base_url=base, timeout=30) as browser:
        page = browser.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        return browser.post(
            "/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"X-Forwarded-For": forwarded_for},
        )


def test_a_forged_forwarded_for_does_not_escape_the_lock_on_an_address(web, tenancy):
    # Three wrong passwords from this address, each for another name and "from" another address.
    for number in range(3):
        answer = sign_in(web, f"nobody{number}", "wrong", f"9.9.9.{number}")
        assert answer.status_code in (200, 429)  # the form again, or locked at the third
    # The address is locked out, whatever the header says and whoever signs in.
    locked = sign_in(web, "owner", "correct horse battery", "9.9.9.99")
    assert locked.status_code == 429, locked.status_code
    assert "locked" in locked.text.lower()


def test_a_chunked_body_is_read(web, tenancy, kinds_seeded):
    body = b'{"content": "Deploys run from the release branch only.", "kind": "convention"}'

    def chunks():
        yield body[:20]
        yield body[20:]

    answer = httpx2.post(
        f"{web}/api/v1/memories",
        content=chunks(),
        headers={
            "Authorization": f"Bearer {make_token(tenancy.writer)}",
            "Content-Type": "application/json",
        },
        timeout=60,
    )
    assert answer.request.headers.get("transfer-encoding") == "chunked"
    assert answer.status_code == 201, answer.text
    assert answer.json()["content"] == "Deploys run from the release branch only."
