"""Requests first, host-wide (zeromemory.core.foreground): a request in flight in any process of
the host makes bulk work wait, within its bound; a process killed with requests in flight
leaves nothing that makes anyone wait; waiting never changes a vector.

Each test process here has a file of its own (tests/conftest.py), so the xdist workers do not
make each other's batches wait; these tests point a child process at it."""

from __future__ import annotations

import json
import os
import random
import signal
import string
import subprocess
import sys
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.conf import settings
from django.test import override_settings

from memories import embeddings
from tests.served import Served
from zeromemory.core import foreground

# A process that counts one request in flight on the test's file, says so and waits.
HOLDER = """
import sys, time
from django.conf import settings
settings.configure(FOREGROUND_FILE=sys.argv[1], FOREGROUND_WAIT_MS=200, CONDUCTOR_FD=0)
from zeromemory.core import foreground
with foreground.interactive():
    print("in flight", flush=True)
    time.sleep(600)
"""


def holder(path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        cwd=settings.BASE_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "in flight"
    return proc


def test_a_request_in_another_process_counts_until_that_process_is_killed():
    board = foreground.board()
    before = board.in_flight()
    proc = holder(settings.FOREGROUND_FILE)
    try:
        assert board.in_flight() == before + 1
        assert foreground.give_way() > 0  # bulk work here waits for it
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # Killed in the middle of its request: its slot is skipped, nobody waits for it.
    assert board.in_flight() == before
    assert foreground.give_way() == 0


# Processes that each die in the middle of a request, one after another.
CRASHES = """
import os, sys
from django.conf import settings
settings.configure(FOREGROUND_FILE=sys.argv[1], FOREGROUND_WAIT_MS=200, CONDUCTOR_FD=0)
from zeromemory.core import foreground
for _ in range(int(sys.argv[2])):
    pid = os.fork()
    if pid == 0:
        with foreground.interactive():
            os._exit(0)  # gone with its request still counted in its slot
    os.waitpid(pid, 0)
"""


def test_the_slots_of_dead_processes_are_taken_again():
    """A host whose processes come and go (web processes restarted, task processes replaced,
    some killed mid-request) never runs out of slots."""
    subprocess.run(
        [sys.executable, "-c", CRASHES, str(settings.FOREGROUND_FILE), str(foreground.SLOTS + 5)],
        cwd=settings.BASE_DIR,
        check=True,
    )
    assert foreground.board().in_flight() == 0
    proc = holder(settings.FOREGROUND_FILE)
    try:
        assert foreground.board().in_flight() == 1
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_a_request_never_waits_and_bulk_work_waits_only_within_its_bound():
    held = threading.Event()
    release = threading.Event()

    def request():
        with foreground.interactive():
            held.set()
            release.wait()

    thread = threading.Thread(target=request)
    thread.start()
    held.wait()
    try:
        with foreground.interactive():  # another request: it runs at once
            assert foreground.is_interactive()
            assert foreground.give_way() == 0
        # A request that embeds a batch steps back: it is bulk work from then on.
        with foreground.interactive():
            foreground.step_back()
            assert not foreground.is_interactive()
        # The request above never ends, and bulk work still goes on.
        with override_settings(FOREGROUND_WAIT_MS=20):
            allowance = foreground.Allowance()
            assert foreground.give_way(allowance) > 0
            assert foreground.give_way(allowance) == 0  # the pass's allowance is spent
    finally:
        release.set()
        thread.join()
    assert foreground.board().in_flight() == 0


def test_a_helper_doing_a_requests_work_never_waits_and_counts_nothing_more():
    """A recall's query embedding in a helper thread (memories.recall.query_vector) is the
    request's work: while the request is in flight it does not wait for it, nor count again."""
    before = foreground.board().in_flight()
    with foreground.interactive():
        counted = foreground.board().in_flight()
        with ThreadPoolExecutor(max_workers=1) as helper:

            def helping(interactive: bool) -> tuple[bool, float, int]:
                with foreground.on_behalf(interactive=interactive):
                    waited = foreground.give_way()
                    return foreground.is_interactive(), waited, foreground.board().in_flight()

            with override_settings(FOREGROUND_WAIT_MS=20):
                assert helper.submit(helping, True).result() == (True, 0.0, counted)
                interactive, waited, _ = helper.submit(helping, False).result()
                assert not interactive and waited > 0  # bulk work's helper still gives way
            assert not helper.submit(foreground.is_interactive).result()  # restored
    assert counted == before + 1 and foreground.board().in_flight() == before


def test_without_its_file_a_request_is_answered_and_nothing_waits(tenancy, tmp_path):
    (tmp_path / "a-file").write_text("")
    with override_settings(FOREGROUND_FILE=tmp_path / "a-file" / "requests"):
        client = tenancy.client(tenancy.writer)
        body = {"content": "The nightly export runs at 02:00 UTC.", "kind": "fact"}
        body["scope"] = tenancy.team.public_id
        assert client.post("/api/v1/memories", body, format="json").status_code == 201
        assert foreground.board().in_flight() == 0
        assert foreground.give_way() == 0


# A process that counts a request on the file given, with nothing else in the way.
COUNTER = """
import sys
from django.conf import settings
settings.configure(FOREGROUND_FILE=sys.argv[1], FOREGROUND_WAIT_MS=200, CONDUCTOR_FD=0)
from zeromemory.core import foreground
with foreground.interactive():
    print(foreground.board().in_flight(), foreground.give_way(), flush=True)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a filesystem takes root")
def test_on_a_full_disk_a_request_is_answered_and_nothing_waits(tmp_path):
    """The file cannot get its blocks: the process counts nothing, and is not killed for writing
    a page the disk has no room for."""
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(full)], check=True)
    try:
        (full / "filler").write_bytes(b"x" * 4096)
        with pytest.raises(OSError):
            (full / "more").write_bytes(b"x")
        counted = subprocess.run(
            [sys.executable, "-c", COUNTER, str(full / "foreground")],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        subprocess.run(["umount", str(full)], check=True)
    assert counted.returncode == 0, counted.stderr
    assert [float(value) for value in counted.stdout.split()] == [0, 0]
    assert "requests are not counted across processes" in counted.stderr


def test_a_batch_embedded_beside_a_request_gets_the_vectors_it_gets_alone():
    texts = [f"Deploy note {n}: the staging database is rebuilt nightly." * 6 for n in range(70)]
    alone = embeddings.embed_texts(texts)
    proc = holder(settings.FOREGROUND_FILE)
    try:
        with override_settings(FOREGROUND_WAIT_MS=30):
            beside = embeddings.embed_texts(texts)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert beside == alone


def post(url: str, token: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(  # noqa: S310 - loopback
        url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
        assert response.status in (200, 201)
        return json.loads(response.read())


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    served = Served(tmp_path_factory.mktemp("served"), ZM_WEB_PROCESSES="2")
    try:
        served.wait_ready()
        yield served
    finally:
        served.cleanup()


def stored_vectors(served: Served, scope: str) -> dict[str, list[float]]:
    return json.loads(
        served.django(
            "import json\n"
            "from memories.models import Memory\n"
            f"rows = Memory.objects.filter(scope__public_id={scope!r})\n"
            "print(json.dumps({m.content: [float(x) for x in m.embedding] for m in rows}))\n"
        )
    )


def sentences(seed: int, count: int, words: int) -> list[str]:
    """Texts of made-up words, far enough apart that none is absorbed as a near duplicate."""
    rng = random.Random(seed)
    return [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=7)) for _ in range(words))
        for _ in range(count)
    ]


def test_a_batch_and_single_remembers_side_by_side_store_the_vectors_of_one_at_a_time(served):
    token = served.create_user_with_token("writer", "a long enough password")
    scopes = [
        post(served.url, token, "/api/v1/scopes", {"name": n, "slug": n, "kind": "project"})["id"]
        for n in ("serial", "together")
    ]
    batch = sentences(1, 60, 40)
    singles = sentences(2, 8, 8)

    def write_batch(scope: str) -> list[int]:
        items = [{"content": text, "kind": "episode", "scope": scope} for text in batch]
        answer = post(served.url, token, "/api/v1/memories/batch", {"items": items})
        return [result["status"] for result in answer["results"]]

    def write_singles(scope: str) -> None:
        for text in singles:
            body = {"content": text, "kind": "fact", "scope": scope}
            assert post(served.url, token, "/api/v1/memories", body)["deduplicated"] is False

    assert write_batch(scopes[0]) == [201] * len(batch)
    write_singles(scopes[0])
    with ThreadPoolExecutor(1) as pool:
        writing = pool.submit(write_batch, scopes[1])
        write_singles(scopes[1])  # while the batch is under way (in either web process)
        assert writing.result() == [201] * len(batch)
    serial, together = (stored_vectors(served, scope) for scope in scopes)
    assert len(serial) == len(batch) + len(singles)
    assert together == serial
