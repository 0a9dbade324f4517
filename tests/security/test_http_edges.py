"""The HTTP edges of the real web process (`python -m zeromemory.web`, what `make run` starts):
a client on the same host cannot pose as another address with X-Forwarded-For, a chunked
request body (no Content-Length) is read like any other, and a body over ZM_MAX_BODY_BYTES gets
a 413 envelope the sender can read."""

from __future__ import annotations

import random
import re
import sys
import zipfile

import httpx2
import pytest
import requests

from tests.factories import make_token
from tests.helpers import child_env
from tests.memories import archive_support as archives
from tests.served import free_port, start_web, stop_process_group

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def web(django_db_setup, django_db_blocker):
    """`zeromemory.web` (as `make run` starts each web process) on the test database."""
    port = free_port()
    argv = [sys.executable, "-m", "zeromemory.web", "--port", str(port)]
    env = child_env(ZM_LOGIN_FAILURE_LIMIT="3", ZM_API_RATE="")
    with django_db_blocker.unblock():
        proc, base = start_web(argv, env=env, port=port)
    yield base
    stop_process_group(proc)


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


LIMIT = 1_048_576  # ZM_MAX_BODY_BYTES of the served process (the default)


def too_large(answer: httpx2.Response | requests.Response) -> None:
    assert answer.status_code == 413, answer.text
    error = answer.json()["error"]
    assert error["code"] == "validation_failed" and str(LIMIT) in error["message"], error
    assert "body" in error["details"]


@pytest.mark.parametrize(
    ("path", "over"),
    [
        ("/api/v1/ingest", 3),
        ("/api/v1/ingest", 30),
        ("/api/v1/memories", 3),
        ("/mcp", 3),
        ("/login/", 3),
    ],
)
def test_a_body_over_the_limit_gets_a_413_the_client_reads(web, tenancy, path, over):
    # MBs over the limit, sent whole over a real socket before the answer is read: the server
    # reads and drops them, then answers, instead of closing under the sender.
    body = b'{"content": "' + b"x" * (LIMIT + over * 1_048_576) + b'"}'
    headers = {
        "Authorization": f"Bearer {make_token(tenancy.writer)}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    too_large(requests.post(f"{web}{path}", data=body, headers=headers, timeout=60))
    with httpx2.Client(timeout=60) as client:  # the connection stays usable afterwards
        too_large(client.post(f"{web}{path}", content=body, headers=headers))
        assert client.get(f"{web}/healthz").status_code in (200, 503)


def test_a_chunked_archive_import_may_pass_the_ordinary_limit(web, tenancy, kinds_seeded):
    """An archive import takes more than ZM_MAX_BODY_BYTES, chunked too (read into a file)."""
    words = [f"w{n}x" for n in range(500)]
    text = " ".join(random.Random(7).choice(words) for _ in range(2_000))
    rows = [
        {"source": "remember", "written_text": text, "created": archives.CLAIMED}
        for _ in range(LIMIT // len(text) + 20)
    ]
    data = archives.archive(
        {archives.path_of(): archives.memory_bytes(provenance=rows)}, zipfile.ZIP_STORED
    )
    assert len(data) > LIMIT

    def chunks():
        for at in range(0, len(data), 65_536):
            yield data[at : at + 65_536]

    answer = httpx2.post(
        f"{web}/api/v1/scopes/{tenancy.team.public_id}/import-export",
        content=chunks(),
        headers={
            "Authorization": f"Bearer {make_token(tenancy.owner)}",
            "Content-Type": "application/zip",
        },
        timeout=60,
    )
    assert answer.request.headers.get("transfer-encoding") == "chunked"
    assert answer.status_code == 200, answer.text


def test_a_chunked_body_over_the_limit_gets_a_413(web, tenancy):
    def chunks():
        for _ in range(5):
            yield b"x" * 1_048_576

    answer = httpx2.post(
        f"{web}/api/v1/ingest",
        content=chunks(),
        headers={
            "Authorization": f"Bearer {make_token(tenancy.writer)}",
            "Content-Type": "application/json",
        },
        timeout=60,
    )
    assert answer.request.headers.get("transfer-encoding") == "chunked"
    too_large(answer)
